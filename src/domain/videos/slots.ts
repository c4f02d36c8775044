import { RateLimitRefusal, type AdmissionService, type SlotHold } from '../limits/admission';

/**
 * The concurrency slot of each running video job (a running video counts toward the account's
 * concurrent-request limit). The slot id is the video's, so taking it again on whichever
 * instance runs the next step is idempotent; that instance's heartbeat refreshes it, and when no
 * instance does (all crashed) it expires by its TTL. The instance that ends the job frees it.
 */
export class VideoJobSlots {
  private readonly local = new Map<string, SlotHold>();

  constructor(private readonly admission: AdmissionService) {}

  static slotId(videoId: string): string {
    return `video:${videoId}`;
  }

  /** At creation: 429 `api_concurrency_limit` when the account has no slot free. */
  async take(accountId: string, videoId: string): Promise<void> {
    const hold = await this.admission.acquireSlot(accountId, { slotId: VideoJobSlots.slotId(videoId) });
    this.local.set(videoId, hold);
  }

  /**
   * Before each step of an admitted job. A job already admitted goes on even when its slot
   * lapsed (all instances were down) and the account is now full: it was counted when it began.
   */
  async keep(accountId: string, videoId: string): Promise<void> {
    try {
      await this.take(accountId, videoId);
    } catch (error) {
      if (!(error instanceof RateLimitRefusal)) throw error;
    }
  }

  /** When the job ends, on whichever instance ends it. */
  async release(accountId: string, videoId: string): Promise<void> {
    const hold = this.local.get(videoId) ?? (await this.admission.acquireSlot(accountId, { slotId: VideoJobSlots.slotId(videoId) }).catch(() => null));
    this.local.delete(videoId);
    await hold?.release();
  }
}
