import type { LimitStore, SettledUsage } from './store';

/**
 * Slots to free in the shared store once it answers again: a release that failed, or a slot
 * whose taking failed on our side (a timeout) while the store may have taken it all the same.
 * Left there, either would count against its account until its TTL, refusing requests for
 * nothing. They go before anything else is asked of the store, and are tried again after a
 * pause even when nothing else comes (`retry` asks the store for nothing but them).
 */
export class PendingReleases {
  private readonly slots = new Map<string, { subject: string; slotId: string; settled?: SettledUsage }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly retryMs: number,
    private readonly retry: () => Promise<unknown>,
  ) {}

  get size(): number {
    return this.slots.size;
  }

  add(subject: string, slotId: string, settled?: SettledUsage): void {
    this.slots.set(slotId, { subject, slotId, settled });
    this.retrySoon();
  }

  /** Frees them all in `store`, in order; one that fails stays (and stops the rest). */
  async flush(store: LimitStore): Promise<void> {
    for (const [slotId, slot] of this.slots) {
      await store.releaseSlot(slot.subject, slot.slotId, slot.settled);
      this.slots.delete(slotId);
    }
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private retrySoon(): void {
    if (this.timer || this.slots.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // A failed pass is simply the next pass's work: retrySoon schedules it.
      void this.retry()
        .catch(() => undefined)
        .finally(() => this.retrySoon());
    }, this.retryMs + 10);
    this.timer.unref?.();
  }
}
