import PgBoss from 'pg-boss';
import type { VideoJobQueue, VideoJobStep } from '../domain/videos/ports';

const QUEUE = 'video-steps';

const isConnectionEnd = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === '57P01' ||
  /Connection terminated|connection ended/i.test(String((error as Error | null)?.message));

export interface PgBossQueueOptions {
  databaseUrl: string;
  /** PostgreSQL schema of pg-boss's own tables. */
  schema: string;
  /** How often an idle worker looks for due steps (seconds). */
  pollingIntervalSeconds: number;
  /** Steps this instance runs at once (one worker loop each). */
  workers: number;
  onError?: (error: unknown) => void;
}

/**
 * The durable queue of video job steps on pg-boss, in Tollgate's database. The queue is
 * `stately` keyed by video id: at most one step of a video waits and one runs at any time, so
 * instances sharing the database never run a job's steps in parallel. A step that throws is
 * retried with backoff; a step on an instance that died is expired and retried by pg-boss's
 * maintenance.
 *
 * The worker loops are ours (fetch, run, complete or fail) rather than `boss.work()`: pg-boss
 * removes its own workers in a detached once-a-second loop that outlives `stop()`, so a
 * process (or a test file) could not know when the queue had really stopped.
 */
export class PgBossVideoQueue implements VideoJobQueue {
  private readonly boss: PgBoss;
  private readonly loops: Promise<void>[] = [];
  private readonly sleepers = new Set<() => void>();
  private stopping = false;

  constructor(private readonly options: PgBossQueueOptions) {
    this.boss = new PgBoss({
      connectionString: options.databaseUrl,
      schema: options.schema,
      max: 3,
      schedule: false,
      application_name: 'tollgate-videos',
    });
    // Connections ending while the queue stops are the stop itself, not errors to report.
    this.boss.on('error', (error) => {
      if (!(this.stopping && isConnectionEnd(error))) options.onError?.(error);
    });
  }

  async start(handler: (step: VideoJobStep) => Promise<void>): Promise<void> {
    await this.boss.start();
    await this.boss.createQueue(QUEUE, {
      name: QUEUE,
      policy: 'stately',
      retryLimit: 10,
      retryDelay: 1,
      retryBackoff: true,
      expireInSeconds: 15 * 60,
    });
    for (let i = 0; i < this.options.workers; i++) this.loops.push(this.workLoop(handler));
  }

  async enqueue(step: VideoJobStep, delayMs: number): Promise<void> {
    await this.boss.send(QUEUE, step, {
      singletonKey: step.videoId,
      ...(delayMs > 0 ? { startAfter: new Date(Date.now() + delayMs) } : {}),
    });
    // Wake our workers when the step is due instead of waiting for their next poll.
    setTimeout(() => this.wakeAll(), delayMs + 5).unref();
  }

  /** Stops taking steps and waits (bounded) for the running ones; a step cut off is retried. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.wakeAll();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all(this.loops), deadline]);
    clearTimeout(timer);
    // Nothing of ours is in pg-boss's work-in-progress, so its stop closes the pool at once.
    await this.boss.stop({ graceful: false, wait: true });
  }

  private async workLoop(handler: (step: VideoJobStep) => Promise<void>): Promise<void> {
    while (!this.stopping) {
      const [job] = await this.boss.fetch<VideoJobStep>(QUEUE, { batchSize: 1 }).catch((error) => {
        this.options.onError?.(error);
        return [];
      });
      if (!job) {
        await this.sleep(this.options.pollingIntervalSeconds * 1000);
        continue;
      }
      try {
        await handler(job.data);
        await this.boss.complete(QUEUE, job.id);
      } catch (error) {
        await this.boss
          .fail(QUEUE, job.id, { message: error instanceof Error ? error.message : String(error) })
          .catch((failError) => this.options.onError?.(failError));
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  private wakeAll(): void {
    for (const wake of [...this.sleepers]) wake();
  }
}
