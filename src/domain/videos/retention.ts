import type { Clock } from '../shared/clock';
import type { VideoStorage } from './ports';
import type { VideoStore } from './store';
import { IDEMPOTENCY_KEY_TTL_MS } from './rules';
import type { VideoJobRunner } from './runner';
import { contentKey } from './service';

const BATCH = 100;

/**
 * Periodic upkeep, safe on every instance at once: deletes files past their retention (the row
 * stays and answers `video_expired`), forgets idempotency keys older than their 7 days, and
 * fails jobs past their deadline whose steps were lost (releasing money and slot).
 */
export class VideoSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly deps: { store: VideoStore; clock: Clock; storage: VideoStorage; runner: VideoJobRunner },
    private readonly options: { intervalMs: number; onError?: (error: unknown) => void },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep()
        .catch((error) => this.options.onError?.(error))
        .finally(() => (this.running = null));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass; returns what it did (for tests and logs). */
  async sweep(now: Date = this.deps.clock.now()): Promise<{ filesDeleted: number; keysForgotten: number; jobsTimedOut: number }> {
    const { store, storage, runner } = this.deps;
    let filesDeleted = 0;
    for (;;) {
      const rows = await store.expiredContent(now, BATCH);
      for (const row of rows) {
        await storage.delete(contentKey(row.id));
        await store.markContentDeleted(row.id, now);
        filesDeleted++;
      }
      if (rows.length < BATCH) break;
    }
    const keysForgotten = await store.purgeIdempotencyKeys(new Date(now.getTime() - IDEMPOTENCY_KEY_TTL_MS));
    const overdue = await store.overdueIds(now, BATCH);
    for (const id of overdue) await runner.failOverdue(id);
    return { filesDeleted, keysForgotten, jobsTimedOut: overdue.length };
  }
}
