import PgBoss from 'pg-boss';
import type { VideoJobQueue, VideoJobStep } from '../domain/videos/ports';

const QUEUE = 'video-steps';

export interface PgBossQueueOptions {
  databaseUrl: string;
  /** PostgreSQL schema of pg-boss's own tables. */
  schema: string;
  /** How often an idle worker looks for due steps (seconds; pg-boss allows 0.5 and up). */
  pollingIntervalSeconds: number;
  /** Steps this instance runs at once (one pg-boss worker each). */
  workers: number;
  onError?: (error: unknown) => void;
}

/**
 * The durable queue of video job steps on pg-boss, in Tollgate's database. The queue is
 * `stately` keyed by video id: at most one step of a video waits and one runs at any time, so
 * instances sharing the database never run a job's steps in parallel. A step that throws is
 * retried with backoff; a step on an instance that died is expired and retried by pg-boss's
 * maintenance.
 */
export class PgBossVideoQueue implements VideoJobQueue {
  private readonly boss: PgBoss;
  private workerIds: string[] = [];

  constructor(private readonly options: PgBossQueueOptions) {
    this.boss = new PgBoss({ connectionString: options.databaseUrl, schema: options.schema, max: 3, schedule: false, application_name: 'tollgate-videos' });
    this.boss.on('error', (error) => options.onError?.(error));
  }

  async start(handler: (step: VideoJobStep) => Promise<void>): Promise<void> {
    await this.boss.start();
    await this.boss.createQueue(QUEUE, { name: QUEUE, policy: 'stately', retryLimit: 10, retryDelay: 1, retryBackoff: true, expireInSeconds: 15 * 60 });
    for (let i = 0; i < this.options.workers; i++) {
      this.workerIds.push(
        await this.boss.work<VideoJobStep>(QUEUE, { batchSize: 1, pollingIntervalSeconds: this.options.pollingIntervalSeconds }, async ([job]) => {
          if (job) await handler(job.data);
        }),
      );
    }
  }

  async enqueue(step: VideoJobStep, delayMs: number): Promise<void> {
    await this.boss.send(QUEUE, step, { singletonKey: step.videoId, ...(delayMs > 0 ? { startAfter: new Date(Date.now() + delayMs) } : {}) });
    // Wake our workers when the step is due instead of waiting for their next poll.
    const workerIds = this.workerIds;
    if (workerIds.length > 0) setTimeout(() => workerIds.forEach((id) => this.boss.notifyWorker(id)), delayMs + 5).unref();
  }

  /** Stops taking steps and waits (bounded) for the running ones; the rest stay queued. */
  async stop(timeoutMs: number): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: timeoutMs });
  }
}
