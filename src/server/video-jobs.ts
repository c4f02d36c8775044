import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { BillingService } from '../domain/billing/service';
import type { Catalog } from '../domain/catalog/types';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import type { AdmissionService } from '../domain/limits/admission';
import type { Clock } from '../domain/shared/clock';
import type { EventBus } from '../domain/shared/events';
import type { DeploymentHealth } from '../domain/routing/health';
import type { IdGenerator } from '../domain/shared/ids';
import type { VideoStorage } from '../domain/videos/ports';
import { VideoJobRunner } from '../domain/videos/runner';
import { VideoSweeper } from '../domain/videos/retention';
import { VideoService } from '../domain/videos/service';
import { VideoJobSlots } from '../domain/videos/slots';
import type { PrometheusMetrics } from '../infra/metrics';
import { PgVideoStore } from '../infra/pg-video-store';
import { PgBossVideoQueue } from '../infra/video-queue';
import { createVideoProviderRegistry } from '../providers/videos/registry';

export interface VideoJobsDeps {
  config: Config;
  databaseUrl: string;
  orm: MikroORM;
  clock: Clock;
  ids: IdGenerator;
  bus: EventBus;
  log: Logger;
  billing: BillingService;
  admission: AdmissionService;
  catalog: Catalog;
  vendors: ReadonlyMap<string, VendorEndpoint>;
  configuredVendors: ReadonlySet<string>;
  storage: VideoStorage;
  metrics: PrometheusMetrics | null;
  /** The deployments' breakers, shared with text and image routing (the `<model>/<deployment>` keys). */
  health: DeploymentHealth;
}

/**
 * Video jobs: durable steps on pg-boss in this database, files behind the storage port. Steps
 * queued here wake a worker at once; the 5 s poll only finds those queued by other instances.
 * Returns once the queue's workers and the retention sweep have started.
 */
export async function startVideoJobs(deps: VideoJobsDeps) {
  const { config, orm, clock, ids, bus, log, billing, catalog, configuredVendors, storage, metrics } = deps;
  const queue = new PgBossVideoQueue({
    databaseUrl: deps.databaseUrl,
    schema: config.videos.queueSchema,
    pollingIntervalSeconds: 5,
    workers: config.videos.workers,
    onError: (err) => log.error({ err }, 'video queue error'),
  });
  const slots = new VideoJobSlots(deps.admission);
  const providers = createVideoProviderRegistry(deps.vendors, {
    sandbox: { renderMs: config.videos.sandboxRenderMs, slowMs: config.videos.sandboxSlowMs },
    http: { timeouts: config.vendorTimeouts },
    health: deps.health,
  });
  const store = new PgVideoStore(orm);
  const videoDeps = { store, clock, ids, bus, billing, catalog, configuredVendors, storage, queue, slots };
  const videos = new VideoService({ ...videoDeps, deadlineMs: config.videos.deadlineMs });
  const runner = new VideoJobRunner({
    ...videoDeps,
    providers,
    log,
    metrics: metrics ?? undefined,
    pollInitialMs: config.videos.pollInitialMs,
    pollMaxMs: config.videos.pollMaxMs,
  });
  const sweeper = new VideoSweeper(
    { store, clock, storage, runner },
    { intervalMs: config.videos.sweepIntervalMs, onError: (err) => log.error({ err }, 'video sweep failed') },
  );
  await queue.start((step) => runner.runStep(step));
  sweeper.start();
  return { videos, runner, sweeper, queue, providers };
}
