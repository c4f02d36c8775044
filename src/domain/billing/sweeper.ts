/**
 * Crash safety: a process that dies mid-request leaves its hold active. Once the hold's
 * `expires_at` has passed it is presumed orphaned and released (nothing charged, counters
 * restored). Several instances may sweep at once: each batch claims its holds with
 * `FOR UPDATE SKIP LOCKED` and the same `status = 'active'` condition as settlement, so a
 * hold is released once, and a settlement racing the sweeper either wins (the sweeper skips
 * or no longer matches it) or finds the hold released and changes nothing.
 */
export const SWEEP_BATCH_SIZE = 100;

/** What the sweeper needs from the billing service (kept narrow so it can be tested alone). */
export interface ExpiredHoldSweep {
  sweepExpiredHolds(now?: Date): Promise<number>;
}

/**
 * Runs `sweepExpiredHolds` on an interval. The timer is unref'd (it never keeps the process
 * alive) and runs never overlap; `stop()` waits for a run in progress.
 */
export class HoldSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly billing: ExpiredHoldSweep,
    private readonly options: { intervalMs?: number; onError?: (error: unknown) => void; onSwept?: (released: number) => void } = {},
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.options.intervalMs ?? 30_000);
    this.timer.unref();
  }

  /** One sweep now (skipped when one is already running); never rejects. */
  runOnce(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.billing
      .sweepExpiredHolds()
      .then((released) => {
        if (released > 0) this.options.onSwept?.(released);
      })
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
