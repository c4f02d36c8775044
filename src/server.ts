import 'reflect-metadata';
import type { Server } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from './config';
import { configuredVendorEndpoints } from './config/vendors';
import { AuthService } from './domain/accounts/auth';
import { SignInThrottle } from './domain/accounts/sign-in-throttle';
import { InMemorySignInStore } from './domain/accounts/sign-in-store';
import { openRedisSignInStore } from './infra/redis-sign-in-store';
import { AccountService } from './domain/accounts/service';
import { KeyService } from './domain/keys/service';
import { BillingService } from './domain/billing/service';
import { SandboxPaymentPort, type PaymentPort } from './domain/billing/payments';
import { HoldSweeper } from './domain/billing/sweeper';
import { RequestLogUpkeep } from './domain/usage/upkeep';
import { UsageService } from './domain/usage/service';
import { pgRequestLogPartitions } from './infra/pg-request-log-partitions';
import { BudgetLeases } from './domain/billing/leases';
import { pgLeaseStore } from './infra/pg-lease-store';
import { pgSqlRunner } from './infra/sql-runner';
import { systemClock, type Clock } from './domain/shared/clock';
import { inProcessEventBus, type EventBus } from './domain/shared/events';
import { createRedisEventBus, type ClosableEventBus } from './infra/redis-event-bus';
import { ulidIds, type IdGenerator } from './domain/shared/ids';
import { lazyGraphql } from './graphql/lazy';
import { SessionFeeds } from './graphql/session-feeds';
import { switchOffIdleAsyncContexts } from './infra/async-context';
import { databaseReady, openDatabase, type ApplyMigrations } from './infra/database';
import { createRestApp } from './rest/app';
import { keysRouter, sessionsRouter } from './rest/keys';
import { modelsRouter } from './rest/models';
import { textEndpoints } from './rest/text-endpoints';
import { TextPipeline } from './domain/generation/pipeline';
import type { TextGenerationService } from './domain/generation/service';
import { createProviderRegistry } from './providers/registry';
import { listDeployments } from './domain/routing/listing';
import { TokenCounter } from './domain/generation/count-tokens';
import type { Catalog } from './domain/catalog/types';
import type { VendorEndpoint } from './domain/catalog/vendors';
import type { AdmissionService } from './domain/limits/admission';
import { createAdmissionService } from './domain/limits/create-admission';
import { admitApiKeyRequests } from './rest/admission';
import { answerClientError, jsonBody } from './rest/http';
import { corsStep } from './rest/cors';
import { openVideoStorage } from './infra/video-storage';
import { usageRouter } from './rest/usage';
import { videosRouter } from './rest/videos';
import { imagesRouter } from './rest/images';
import { DEFAULT_MULTIPART_LIMITS } from './rest/multipart';
import { ImageService } from './domain/images/service';
import { createImageProviders } from './providers/images/registry';
import { noMetrics, type Tracer } from './domain/shared/telemetry';
import { PrometheusMetrics } from './infra/metrics';
import { startTracing } from './infra/tracing';
import { openRedisLimitStore } from './infra/redis-limits-client';
import { metricsRouter } from './rest/metrics';
import { openApiRouter } from './rest/openapi/route';
import { API_ROUTES } from './rest/openapi/routes';
import { routePatterns } from './rest/route-patterns';
import type { RequestObservers } from './rest/http';
import type { Express } from 'express';
import { pgHoldStore } from './infra/pg-hold-store';
import { pgAutoTopUpStore } from './infra/pg-auto-top-up-store';
import { pgSpendLimitStore } from './infra/pg-spend-limit-store';
import { PgBillingReads } from './infra/pg-billing-reads';
import { PgUsageReads } from './infra/pg-usage-reads';
import { PgCredentialStore } from './infra/pg-credential-store';
import { PgAccountStore, pgAccountTierSource } from './infra/pg-account-store';
import { createLogger, withErrorSerializer } from './infra/logger';
import { createGatewayHttpServer } from './server/http-server';
import { reportOverage } from './server/overage';
import { openRouting } from './server/routing';
import { startVideoJobs } from './server/video-jobs';
import type { VideoService } from './domain/videos/service';
import type { VideoJobRunner } from './domain/videos/runner';
import type { VideoSweeper } from './domain/videos/retention';

/** The version reported in traces (`service.version`). */
const TOLLGATE_VERSION = '0.1.0';

/** Sign-out and expiry end live feeds at once; a session deleted any other way (its user removed) is found within this (ms). */
const SESSION_CHECK_INTERVAL_MS = 30_000;

/** After-answer settlements wait up to this long (ms) to share a batch (100 make it due at once: docs/billing.md). */
const SETTLEMENT_BATCH_DELAY_MS = 100;
/** Settlement batches written at once, each on its own accounts and connection (docs/billing.md). */
const SETTLEMENT_LANES = 2;

export interface TollgateOptions {
  config: Config;
  /** The PostgreSQL to use (main.ts resolves the embedded default). */
  databaseUrl: string;
  clock?: Clock;
  ids?: IdGenerator;
  log?: Logger;
  /** Payment port for automatic top-ups; the sandbox port (always succeeds) by default. */
  payments?: PaymentPort;
  /** How often expired holds are swept (ms). */
  sweepIntervalMs?: number;
  /** How often the sessions behind live GraphQL feeds are checked for having gone another way than sign-out or expiry (ms). */
  sessionCheckIntervalMs?: number;
  /** How pending migrations are applied: in this process unless given (`tollgate start`: a child process). */
  applyMigrations?: ApplyMigrations;
}

export interface Services {
  orm: MikroORM;
  clock: Clock;
  ids: IdGenerator;
  bus: EventBus;
  auth: AuthService;
  accounts: AccountService;
  keys: KeyService;
  billing: BillingService;
  catalog: Catalog;
  vendors: ReadonlyMap<string, VendorEndpoint>;
  admission: AdmissionService;
  videos: VideoService;
  videoRunner: VideoJobRunner;
  videoSweeper: VideoSweeper;
  usage: UsageService;
  /** The text generation pipeline the text endpoints call. */
  text: TextGenerationService;
}

export interface Tollgate {
  httpServer: Server;
  /** The Express app of every route but the text endpoints (its routes are listed by the API document's test). */
  restApp: Express;
  services: Services;
  /** Whether a GraphQL request has loaded the GraphQL API yet (graphql/lazy.ts). */
  graphqlLoaded(): boolean;
  listen(port: number, host?: string): Promise<number>;
  /** Stops accepting, lets requests in flight finish (bounded), then closes everything. */
  close(drainMs?: number): Promise<void>;
}

/** The composition root: wires the domain, both planes and the infrastructure together. */
export async function createTollgate(options: TollgateOptions): Promise<Tollgate> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? ulidIds();
  const log = options.log ? withErrorSerializer(options.log) : createLogger(config.logLevel);
  const catalog = config.catalog;
  const vendors = configuredVendorEndpoints(catalog, config.vendors);
  // First: a bucket that cannot be used stops the start before anything else is opened.
  const { storage: videoStorage, close: closeVideoStorage } = await openVideoStorage(config.videos.storage);
  switchOffIdleAsyncContexts(); // before the ORM's first transaction (infra/async-context.ts)
  const orm = await openDatabase(options.databaseUrl, undefined, options.applyMigrations);
  // Across instances through Redis when it is configured (key-cache invalidation, subscriptions).
  const bus: ClosableEventBus = config.redisUrl
    ? createRedisEventBus(config.redisUrl, config.redisKeyPrefix, log)
    : { ...inProcessEventBus(), close: async () => undefined };
  // Failed sign-ins are counted on every instance's shared Redis when there is one (domain/accounts/sign-in-rules.ts).
  const signInStore = config.redisUrl ? await openRedisSignInStore(config.redisUrl, config.redisKeyPrefix, log) : null;
  const throttle = new SignInThrottle(signInStore ?? new InMemorySignInStore(), signInStore ? new InMemorySignInStore() : null, clock, log);
  const auth = new AuthService(
    new PgCredentialStore(orm),
    clock,
    ids,
    bus,
    { adminToken: config.adminToken, sessionTtlSeconds: config.sessionTtlSeconds },
    throttle,
  );
  const accounts = new AccountService(new PgAccountStore(orm), clock, ids, bus, config.limits);
  const keys = new KeyService(orm, clock, ids, bus);
  // GraphQL subscriptions end with the session that opened them (graphql/session-feeds.ts).
  const feeds = new SessionFeeds(auth, bus, clock, options.sessionCheckIntervalMs ?? SESSION_CHECK_INTERVAL_MS);
  // Metrics are served to the operator only: without an operator token, none are kept. What the
  // budget leases (below) hold in flight is read when metrics are scraped.
  const metrics: PrometheusMetrics | null = config.adminToken
    ? new PrometheusMetrics({ inFlight: () => budget.inFlight(), settlementBacklog: () => budget.settlementBacklog() }, feeds)
    : null;
  const billingReads = new PgBillingReads(orm);
  const billing = new BillingService(
    clock,
    ids,
    bus,
    options.payments ?? new SandboxPaymentPort(),
    pgHoldStore(orm),
    billingReads,
    pgAutoTopUpStore(orm),
    pgSpendLimitStore(orm),
    reportOverage(catalog, metrics, log),
  );
  await accounts.syncPlans();
  // Releases holds whose request died with its process (crash safety); safe on every instance.
  const sweeper = new HoldSweeper(billing, {
    intervalMs: options.sweepIntervalMs ?? config.sweepIntervalMs,
    onError: (err) => log.error({ err }, 'hold sweep failed'),
    onSwept: (released) => log.info({ released }, 'released expired holds'),
  });
  sweeper.start();
  // The request log's monthly partitions: made ahead of their rows, dropped past retention.
  const requestLogUpkeep = new RequestLogUpkeep(pgRequestLogPartitions(orm), clock, {
    retentionMonths: config.requestLogRetentionMonths,
    onChange: (change) => log.info({ partition: change.partition }, `request log partition ${change.action}`),
    onError: (err) => log.error({ err }, 'request log upkeep failed'),
  });
  await requestLogUpkeep.start();
  const { health, router } = await openRouting(config, catalog, log, metrics);
  metrics?.routing.watch({ deploymentStates: () => listDeployments(catalog, configuredVendors, health) });
  const providers = createProviderRegistry(vendors, { http: { timeouts: config.vendorTimeouts }, router });
  const configuredVendors = new Set(vendors.keys());
  // Lease takes and the batch writer each get their own connections (see BudgetLeases).
  const billingSql = pgSqlRunner(options.databaseUrl, log, 4);
  const batchSql = pgSqlRunner(options.databaseUrl, log, SETTLEMENT_LANES);
  const settleBeforeAnswer = config.settlement === 'before-answer';
  const budget: BudgetLeases = new BudgetLeases(pgLeaseStore(billingSql), billing, clock, ids, bus, {
    writerStore: pgLeaseStore(batchSql),
    writerLanes: SETTLEMENT_LANES,
    settlementDelayMs: settleBeforeAnswer ? 0 : SETTLEMENT_BATCH_DELAY_MS,
    settlementBacklog: config.settlementBacklog,
    leaseTtlMs: config.leaseTtlMs,
  });
  const tracer: Tracer | null = config.otlpTracesUrl
    ? await startTracing({ tracesUrl: config.otlpTracesUrl, serviceName: config.otelServiceName, serviceVersion: TOLLGATE_VERSION })
    : null;
  const observers: RequestObservers = { ids, log, metrics: metrics ?? noMetrics, tracer, endpointOf: routePatterns(API_ROUTES) };
  const textPipeline = new TextPipeline({
    catalog,
    configuredVendors,
    providers,
    budget,
    clock,
    settleBeforeAnswer,
    // Rare (the database went away): the charge is not booked; the line names the request to reconcile.
    onSettlementFailed: (err, requestId) => log.error({ err, request_id: requestId }, 'settlement could not be written'),
    metrics: metrics ?? undefined,
  });
  const sharedLimits = config.redisUrl ? await openRedisLimitStore(config.redisUrl, { keyPrefix: config.redisKeyPrefix, log }) : null;
  const admission = createAdmissionService({
    tierSource: pgAccountTierSource(orm),
    clock,
    bus,
    log,
    sharedStore: sharedLimits,
    tiers: config.limits.tiers,
  });
  const {
    videos,
    runner: videoRunner,
    sweeper: videoSweeper,
    queue: videoQueue,
    providers: videoProviders,
  } = await startVideoJobs({
    config,
    databaseUrl: options.databaseUrl,
    orm,
    clock,
    ids,
    bus,
    log,
    billing,
    admission,
    catalog,
    vendors,
    configuredVendors,
    storage: videoStorage,
    metrics,
    router,
  });
  // Images: their own vendor client, whose timeouts allow the minutes an image can take.
  const imageTimeouts = {
    connectMs: config.vendorTimeouts.connectMs,
    headersMs: config.imageVendorTimeoutMs,
    bodyIdleMs: config.imageVendorTimeoutMs,
  };
  const imageProviders = createImageProviders(vendors, { http: { timeouts: imageTimeouts }, router });
  const images = new ImageService({
    providers: imageProviders,
    catalog,
    configuredVendors,
    billing,
    clock,
    metrics: metrics ?? undefined,
    onError: (err) => log.warn({ err }, 'could not name the deployment on an image usage record'),
  });
  const usage = new UsageService(clock, billingReads, new PgUsageReads(orm));
  const services: Services = {
    orm,
    clock,
    ids,
    bus,
    auth,
    accounts,
    keys,
    billing,
    catalog,
    vendors,
    admission,
    videos,
    videoRunner,
    videoSweeper,
    usage,
    text: textPipeline,
  };

  const { httpServer, track, listen, drain } = createGatewayHttpServer();
  const graphql = lazyGraphql(
    httpServer,
    {
      auth,
      accounts,
      keys,
      billing,
      bus,
      videos,
      usage,
      catalog,
      configuredVendors,
      deployments: () => listDeployments(catalog, configuredVendors, health),
    },
    log,
    { introspection: config.graphqlIntrospection, feeds },
  );
  // Express routes read JSON bodies after authenticating (rest/http.ts readJsonBody).
  const jsonBodies = jsonBody(config.maxJsonBodyBytes);
  const app = createRestApp({
    observers,
    maxJsonBodyBytes: config.maxJsonBodyBytes,
    graphql: graphql.middleware,
    ready: () => databaseReady(orm),
    tracker: (_req, res, next) => {
      track(res);
      next();
    },
    v1: [
      sessionsRouter(auth, jsonBodies),
      keysRouter(auth, keys, jsonBodies),
      modelsRouter(auth, catalog, configuredVendors, admitApiKeyRequests(admission)),
      imagesRouter({
        auth,
        admission,
        images,
        clock,
        uploadLimits: { ...DEFAULT_MULTIPART_LIMITS, ...config.uploads },
        jsonBody: jsonBodies,
      }),
      videosRouter({
        auth,
        admission,
        videos,
        storage: videoStorage,
        uploads: { ...config.uploads, maxFields: 16, maxFieldBytes: 64 * 1024 },
        maxJsonBodyBytes: config.maxJsonBodyBytes,
      }),
      usageRouter({ auth, usage, billing, accounts, keys, admitRequest: admitApiKeyRequests(admission) }),
      openApiRouter(),
    ],
    root: [metricsRouter(auth, metrics)],
  });
  const tokenCounter = new TokenCounter({ catalog, configuredVendors, providers });
  const text = textEndpoints(
    { auth, admission, pipeline: textPipeline, tokenCounter, observers, maxJsonBodyBytes: config.maxJsonBodyBytes },
    track,
  );
  httpServer.on('clientError', answerClientError);
  const cors = corsStep(config.cors, observers);
  httpServer.on('request', (req, res) => {
    if (cors(req, res)) return;
    // Express answers its own failures (the error middleware); nothing is left to await here.
    if (!text(req, res)) void app(req, res);
  });

  return {
    httpServer,
    restApp: app,
    services,
    graphqlLoaded: () => graphql.loaded,
    listen,
    close: async (drainMs = 30_000) => {
      const deadline = await drain(drainMs);
      await graphql.close();
      feeds.close();
      await videoSweeper.stop();
      await videoQueue.stop(Math.max(1_000, deadline - Date.now())); // running steps finish; the rest wait in the queue
      // A collector that is down must not keep the gateway from stopping.
      await tracer?.close().catch((err: unknown) => log.warn({ err }, 'could not export the last spans'));
      await auth.close();
      await budget.close();
      await billingSql.close();
      await batchSql.close();
      await sweeper.stop();
      await requestLogUpkeep.stop();
      await providers.close();
      await health.close();
      await imageProviders.close();
      await videoProviders.close();
      closeVideoStorage();
      await admission.close();
      await bus.close();
      await orm.close();
    },
  };
}
