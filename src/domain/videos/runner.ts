import type { Metrics } from '../shared/telemetry';
import type { BillingService } from '../billing/service';
import type { Catalog, VideoModel } from '../catalog/types';
import { ProviderError } from '../generation/errors';
import type { Clock } from '../shared/clock';
import { noDeploymentServed } from '../routing/failover';
import { ApiError } from '../shared/errors';
import type {
  VendorJobHandle,
  VideoInputImage,
  VideoInputRole,
  VideoJobQueue,
  VideoJobStep,
  VideoProvider,
  VideoProviders,
  VideoStorage,
} from './ports';
import type { Video } from './entities';
import type { VideoStore } from './store';
import { VIDEO_RETENTION_MS } from './rules';
import { contentKey } from './service';
import type { VideoJobSlots } from './slots';
import { TOPIC_VIDEO_UPDATED, type EventBus } from '../shared/events';
import { toVideoView } from './view';

/** The few logger methods the runner uses (pino's Logger fits). */
export interface RunnerLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface VideoRunnerDeps {
  store: VideoStore;
  clock: Clock;
  bus: EventBus;
  billing: BillingService;
  catalog: Catalog;
  providers: VideoProviders;
  storage: VideoStorage;
  queue: VideoJobQueue;
  slots: VideoJobSlots;
  log?: RunnerLogger;
  /** Spend of completed jobs (no-op when metrics are off). */
  metrics?: Metrics;
  /** First wait between vendor polls (ms); it grows ×1.5 per poll up to `pollMaxMs`. */
  pollInitialMs: number;
  pollMaxMs: number;
}

/**
 * Runs a video job as a chain of short, durable steps: each step (one queue job) starts the
 * vendor generation if it has not been, polls it once, and either queues the next poll with
 * backoff or finishes the job. A step is small, so a shutting-down instance finishes its step
 * quickly and the next one runs wherever the queue hands it; every write is conditional on the
 * status it expects, so a step that runs twice changes nothing the second time, and the hold
 * is settled (idempotent) before the job is marked completed: a completed job is charged once.
 * A hold with no job row (a creator that died before inserting it) is released by the hold sweeper.
 */
export class VideoJobRunner {
  constructor(private readonly deps: VideoRunnerDeps) {}

  backoffMs(attempt: number): number {
    return Math.min(this.deps.pollMaxMs, Math.round(this.deps.pollInitialMs * 1.5 ** attempt));
  }

  async runStep(step: VideoJobStep): Promise<void> {
    const { store, clock, slots } = this.deps;
    const row = await store.find(step.videoId);
    if (!row || row.status === 'completed' || row.status === 'failed') return;
    if (clock.now() >= row.deadlineAt) return this.fail(row, 'timeout', 'The vendor did not finish the video before its deadline.');
    await slots.keep(row.accountId, row.id);
    try {
      await this.advance(row, step);
    } finally {
      slots.detach(row.id); // freed already when the job ended; otherwise the next step renews it
    }
  }

  private async advance(initial: Video, step: VideoJobStep): Promise<void> {
    const { store } = this.deps;
    let row = initial;
    if (row.status === 'queued') {
      const started = await store.markStarted(row.id, this.deps.clock.now());
      if (!started) return;
      row = started;
      this.publish(row);
    }
    const model = this.deps.catalog.byId.get(row.model);
    if (!model || model.kind !== 'video')
      return this.fail(row, 'model_not_available', `The model '${row.model}' is no longer in the catalog.`);
    const { providers } = this.deps;
    try {
      let handle = row.vendorJob;
      if (handle === null) {
        // Failover across the model's deployments happens here, before any vendor holds the job.
        const started = await providers.start({
          model,
          prompt: row.prompt,
          seconds: row.seconds,
          resolution: row.resolution,
          ratio: row.ratio,
          inputs: await this.readInputs(row),
        });
        // A step that raced us to the vendor already saved its handle: poll that one, where it lives.
        const saved = (await store.saveVendorJob(row.id, started.handle, started.deployment)) ? null : await store.find(row.id);
        handle = saved?.vendorJob ?? started.handle;
        row = { ...row, vendorJob: handle, deployment: saved?.vendorJob ? saved.deployment : started.deployment };
      }
      // Bound to the deployment that accepted it, whatever that deployment's health now.
      const provider = providers.forJob(model, row.deployment);
      if (provider === null)
        return this.fail(
          row,
          'deployment_not_available',
          `The deployment '${row.deployment}' that holds this job is no longer configured.`,
        );
      const state = await provider.poll(handle);
      if (state.status === 'failed') return this.fail(row, state.code, state.message);
      if (state.status === 'running') {
        const raised = await store.raiseProgress(row.id, Math.max(0, Math.min(99, Math.floor(state.progress))));
        if (raised) this.publish(raised);
        return this.deps.queue.enqueue({ videoId: row.id, attempt: step.attempt + 1 }, this.backoffMs(step.attempt));
      }
      await this.complete(row, model, provider, handle);
    } catch (error) {
      // Every deployment cooled or rate-limited (routing's 503/429) waits like a vendor fault; other errors go to the queue's retries.
      if (!(error instanceof ApiError) || (!(error instanceof ProviderError) && !noDeploymentServed(error))) throw error;
      if (error instanceof ProviderError && isPermanentRefusal(error.vendorStatus)) return this.fail(row, 'provider_error', error.message);
      this.deps.log?.warn(
        { video_id: row.id, err: error.message, vendor_status: error instanceof ProviderError ? error.vendorStatus : null },
        'video vendor call failed; retrying',
      );
      await this.deps.queue.enqueue({ videoId: row.id, attempt: step.attempt + 1 }, this.backoffMs(step.attempt));
    }
  }

  /*
   * Completion and failure can race (a step finishing as the sweeper times the job out on
   * another instance). The hold decides: it is settled or released exactly once, and the job
   * takes the ending its hold got — a failed job is never charged, a charged job never failed.
   */

  private async complete(row: Video, model: VideoModel, provider: VideoProvider, handle: VendorJobHandle): Promise<void> {
    const { billing, storage, clock } = this.deps;
    const bytes = await storage.write(contentKey(row.id), await provider.download(handle));
    const hold = await billing.getHold(row.holdId);
    // The price was fixed when the job was accepted: the hold is exactly seconds × per-second price.
    const latencyMs = clock.nowMs() - row.createdAt.getTime();
    const settled = await billing.settleHold(row.holdId, {
      costMicro: hold?.amountMicro ?? 0n,
      usage: { videoSeconds: row.seconds },
      latencyMs,
      requestId: row.id,
      deployment: row.deployment,
    });
    if (settled.status === 'released') {
      // Its failure won the race (or the hold outlived its TTL): it delivers nothing and costs nothing.
      await storage.delete(contentKey(row.id));
      return this.fail(row, 'reservation_ended', 'The job ended before the video was delivered; nothing was charged.');
    }
    const vendor = model.deployments.find((d) => d.name === row.deployment)?.vendor ?? model.vendor;
    this.deps.metrics?.charged(vendor, model.id, { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 }, settled.chargedMicro);
    await this.markDone(row, bytes);
  }

  /** Fails the job (if it has not ended), releases its hold and frees its slot: nothing is charged. */
  async fail(row: Video, code: string, message: string): Promise<void> {
    const { store, clock, billing, storage } = this.deps;
    const released = await billing.releaseHold(row.holdId, {
      recordFailure: true,
      usage: { videoSeconds: 0 },
      requestId: row.id,
      deployment: row.deployment,
    });
    if (released.status === 'settled') {
      // A completing step charged it, so its file is stored: the job completed (that step may have died before saying so).
      return this.markDone(row, (await storage.size(contentKey(row.id))) ?? 0);
    }
    await this.freeSlot(row);
    const failed = await store.markFailed(row.id, clock.now(), code, message);
    if (failed) {
      this.publish(failed);
      this.deps.log?.info(
        { video_id: row.id, account_id: row.accountId, model: row.model, status: 'failed', error_code: code },
        'video job ended',
      );
    }
    await this.deleteInputs(row);
  }

  private async markDone(row: Video, bytes: number): Promise<void> {
    const now = this.deps.clock.now();
    await this.freeSlot(row);
    const done = await this.deps.store.markCompleted(row.id, now, new Date(now.getTime() + VIDEO_RETENTION_MS), bytes);
    if (done) {
      this.publish(done);
      this.deps.log?.info({ video_id: row.id, account_id: row.accountId, model: row.model, status: 'completed', bytes }, 'video job ended');
    }
    await this.deleteInputs(row);
  }

  /**
   * Frees the job's concurrency slot before the job is said to have ended, so a client told it
   * ended may start the next one at once. A slot that cannot be freed (the limit store is away)
   * expires by its TTL: it never keeps the job from ending.
   */
  private async freeSlot(row: Video): Promise<void> {
    await this.deps.slots.release(row.accountId, row.id).catch(() => undefined);
  }

  /** For the sweeper: a job whose steps were lost still fails at its deadline. */
  async failOverdue(videoId: string): Promise<void> {
    const row = await this.deps.store.find(videoId);
    if (row && (row.status === 'queued' || row.status === 'in_progress'))
      await this.fail(row, 'timeout', 'The video was not finished before its deadline.');
  }

  private publish(row: Video): void {
    this.deps.bus.publish(TOPIC_VIDEO_UPDATED, toVideoView(row));
  }

  private async readInputs(row: Video): Promise<VideoInputImage[]> {
    return Promise.all(
      row.inputs.map(async (input) => ({
        role: input.role as VideoInputRole,
        mediaType: input.mediaType,
        bytes: await this.deps.storage.read(input.key),
      })),
    );
  }

  /** Best effort: the job has ended either way, and an input file left behind holds no money. */
  private async deleteInputs(row: Video): Promise<void> {
    await Promise.all(row.inputs.map((input) => this.deps.storage.delete(input.key).catch(() => undefined)));
  }
}

/** A vendor's 4xx (other than timeouts, conflicts and rate limits) will not change on retry. */
function isPermanentRefusal(status: number | null): boolean {
  return status !== null && status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429;
}
