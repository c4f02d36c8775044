import { type AdmissionService, type SlotHold } from '../limits/admission';
import { RateLimitRefusal } from '../limits/refusals';

/**
 * The concurrency slot of each running video job (a running video counts toward the account's
 * concurrent-request limit). The slot id is the video's, so taking it again on whichever
 * instance runs the next step is idempotent. An instance refreshes it (admission heartbeat)
 * only while it runs one of the job's steps; between steps the slot lives on its TTL, which
 * the next step renews (steps are at most TOLLGATE_VIDEO_POLL_MAX_MS apart, well under it).
 * When no instance runs the job any more (all crashed), it expires. The instance that ends
 * the job frees it.
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

  /** After a step (or the creation) that leaves the job running: no heartbeat from here until the next step. */
  detach(videoId: string): void {
    this.local.delete(videoId);
    this.admission.forgetSlot(VideoJobSlots.slotId(videoId));
  }

  /** When the job ends, on whichever instance ends it. */
  async release(accountId: string, videoId: string): Promise<void> {
    const hold =
      this.local.get(videoId) ?? (await this.admission.acquireSlot(accountId, { slotId: VideoJobSlots.slotId(videoId) }).catch(() => null));
    this.local.delete(videoId);
    await hold?.release();
  }
}
