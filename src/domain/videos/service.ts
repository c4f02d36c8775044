import { requirePrepaidKey, type KeyPrincipal } from '../shared/principal';
import { mediaCostMicro } from '../billing/pricing';
import type { BillingService } from '../billing/service';
import { resolveModelId } from '../catalog/resolve';
import type { Catalog, VideoModel } from '../catalog/types';
import { modelAccessFor } from '../catalog/vendors';
import type { Clock } from '../shared/clock';
import { badRequest, idempotencyConflict, notFound, unavailable, videoExpired, videoNotReady } from '../shared/errors';
import type { IdGenerator } from '../shared/ids';
import type { StoredInput, VideoInputImage, VideoJobQueue, VideoStorage } from './ports';
import type { VideoListQuery, VideoStore } from './store';
import type { Video, VideoIdempotencyKey } from './entities';
import {
  IDEMPOTENCY_KEY_TTL_MS,
  isVideoId,
  requestHash,
  validateVideoRequest,
  type ValidVideoRequest,
  type VideoRequestInput,
} from './rules';
import type { VideoJobSlots } from './slots';
import { TOPIC_VIDEO_UPDATED, type EventBus, type VideoView } from '../shared/events';
import { toVideoView } from './view';

export interface VideoServiceDeps {
  store: VideoStore;
  clock: Clock;
  ids: IdGenerator;
  bus: EventBus;
  billing: BillingService;
  catalog: Catalog;
  configuredVendors: ReadonlySet<string>;
  storage: VideoStorage;
  queue: VideoJobQueue;
  slots: VideoJobSlots;
  /** A job not finished this long after creation fails and releases its money. */
  deadlineMs: number;
}

export interface VideoCreateInput {
  request: VideoRequestInput;
  idempotencyKey: string | null;
}

export interface VideoCreated {
  video: VideoView;
  /** The same key and body were seen before: this is the job they created. */
  replayed: boolean;
  /** The model id as sent, when it was not the service id. */
  routedFrom: string | null;
}

export interface VideoPage {
  data: VideoView[];
  firstId: string | null;
  lastId: string | null;
  hasMore: boolean;
}

/** The hold outlives the deadline a little, so the job (not the sweeper) decides its fate. */
const HOLD_GRACE_MS = 10 * 60_000;
/** A claimed key whose job never appeared this long after (its creator died mid-way) is taken over. */
const STALE_CLAIM_MS = 30_000;
const CLAIM_WAIT_STEP_MS = 20;
/** Claim, lose, find the winner gone (its creation failed), claim again: bounded. */
const MAX_CLAIM_ATTEMPTS = 50;

export const contentKey = (videoId: string): string => `videos/${videoId}.mp4`;
export const inputKey = (videoId: string, index: number): string => `inputs/${videoId}/${index}`;

/**
 * Video jobs for the REST and GraphQL planes: creation (validated, idempotent, held, slotted,
 * queued), reads, and where a finished file is. The job itself runs in runner.ts.
 */
export class VideoService {
  constructor(private readonly deps: VideoServiceDeps) {}

  async create(principal: KeyPrincipal, input: VideoCreateInput): Promise<VideoCreated> {
    requirePrepaidKey(principal);
    const { modelId: sentModel, inputs } = input.request;
    const { model, routedFrom } = resolveModelId(
      this.deps.catalog,
      sentModel,
      'video',
      modelAccessFor(principal, this.deps.configuredVendors),
    );
    const request = validateVideoRequest(model, input.request, inputs);
    if (input.idempotencyKey === null) {
      return { video: await this.start(principal, model, request, inputs, this.deps.ids.next('vid')), replayed: false, routedFrom };
    }
    const hash = requestHash(sentModel, request, inputs);
    const { store } = this.deps;
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
      const claim: VideoIdempotencyKey = {
        accountId: principal.accountId,
        idempotencyKey: input.idempotencyKey,
        requestHash: hash,
        videoId: this.deps.ids.next('vid'),
        createdAt: this.deps.clock.now(),
      };
      if (await store.claimIdempotencyKey(claim)) {
        try {
          return { video: await this.start(principal, model, request, inputs, claim.videoId), replayed: false, routedFrom };
        } catch (error) {
          // Nothing was created: the key is free again (for a retry after a top-up, say).
          await store.dropIdempotencyClaim(claim);
          throw error;
        }
      }
      const existing = await store.findIdempotencyClaim(principal.accountId, input.idempotencyKey);
      if (!existing) continue; // its creation failed meanwhile: claim it again
      if (this.deps.clock.nowMs() - existing.createdAt.getTime() >= IDEMPOTENCY_KEY_TTL_MS) {
        await store.dropIdempotencyClaim(existing);
        continue;
      }
      if (existing.requestHash !== hash) throw idempotencyConflict();
      const video = await this.awaitClaimedVideo(existing);
      if (video) return { video, replayed: true, routedFrom };
    }
    // Only when requests with this key keep failing as fast as they are retried.
    throw unavailable('Other requests with this Idempotency-Key are still being refused; retry shortly.');
  }

  /**
   * Whether a create with this key would replay (or conflict with) a job already made: the REST
   * plane then answers it without admission, as the job's own slot was counted when it began.
   */
  async idempotencyKeyInUse(accountId: string, idempotencyKey: string): Promise<boolean> {
    const claim = await this.deps.store.findIdempotencyClaim(accountId, idempotencyKey);
    return claim !== null && this.deps.clock.nowMs() - claim.createdAt.getTime() < IDEMPOTENCY_KEY_TTL_MS;
  }

  /** A racing request with the same key: waits for the winner's job, or null when the winner gave up. */
  private async awaitClaimedVideo(claim: VideoIdempotencyKey): Promise<VideoView | null> {
    const { store } = this.deps;
    for (;;) {
      const row = await store.find(claim.videoId);
      if (row) return (await this.withCharges([row]))[0]!;
      const current = await store.findIdempotencyClaim(claim.accountId, claim.idempotencyKey);
      if (!current || current.videoId !== claim.videoId) return null;
      if (this.deps.clock.nowMs() - current.createdAt.getTime() > STALE_CLAIM_MS) {
        await store.dropIdempotencyClaim(claim);
        return null;
      }
      await new Promise((resolve) => setTimeout(resolve, CLAIM_WAIT_STEP_MS));
    }
  }

  /** Slot, then hold (429 and 402 leave nothing behind), then the row and its first step. */
  private async start(
    principal: KeyPrincipal,
    model: VideoModel,
    request: ValidVideoRequest,
    inputs: readonly VideoInputImage[],
    videoId: string,
  ): Promise<VideoView> {
    const { billing, storage, slots, clock } = this.deps;
    await slots.take(principal.accountId, videoId);
    let holdId: string;
    try {
      const hold = await billing.reserveHold({
        principal,
        purpose: 'video',
        model: model.id,
        amountMicro: mediaCostMicro(model.pricing!.perSecondMicro, request.seconds),
        ttlMs: this.deps.deadlineMs + HOLD_GRACE_MS,
      });
      holdId = hold.id;
    } catch (error) {
      await slots.release(principal.accountId, videoId);
      throw error;
    }
    const { store } = this.deps;
    let inserted = false;
    try {
      const stored: StoredInput[] = [];
      for (const [index, image] of inputs.entries()) {
        await storage.write(inputKey(videoId, index), image.bytes);
        stored.push({ role: image.role, mediaType: image.mediaType, key: inputKey(videoId, index) });
      }
      const now = clock.now();
      const row = await store.insert({
        id: videoId,
        accountId: principal.accountId,
        keyId: principal.keyId,
        model: model.id,
        ...request,
        holdId,
        inputs: stored,
        createdAt: now,
        deadlineAt: new Date(now.getTime() + this.deps.deadlineMs),
      });
      inserted = true;
      // Before queueing: the first step may start here at once and take the slot's heartbeat.
      slots.detach(videoId);
      await this.deps.queue.enqueue({ videoId, attempt: 0 }, 0);
      const view = toVideoView(row);
      this.deps.bus.publish(TOPIC_VIDEO_UPDATED, view);
      return view;
    } catch (error) {
      if (inserted) await store.markFailed(videoId, clock.now(), 'internal_error', 'The job could not be queued.');
      await billing.releaseHold(holdId);
      await slots.release(principal.accountId, videoId);
      // The creation already failed and that error is what the caller gets; an input file left
      // behind belongs to no job and holds no money.
      await Promise.all(inputs.map((_, index) => storage.delete(inputKey(videoId, index)).catch(() => undefined)));
      throw error;
    }
  }

  /** 404 `not_found` for an unknown id, another account's video and a deleted one alike. */
  async get(accountId: string, videoId: string): Promise<VideoView> {
    const row = await this.ownRow(accountId, videoId);
    return (await this.withCharges([row]))[0]!;
  }

  /** Views with what each completed job was charged (one read for the page). */
  private async withCharges(rows: Video[]): Promise<VideoView[]> {
    const charges = await this.deps.store.charges(rows.filter((row) => row.status === 'completed').map((row) => row.holdId));
    return rows.map((row) => toVideoView(row, charges.get(row.holdId) ?? null));
  }

  private async ownRow(accountId: string, videoId: string): Promise<Video> {
    const row = isVideoId(videoId) ? await this.deps.store.find(videoId) : null;
    if (!row || row.accountId !== accountId || row.deletedAt !== null) throw notFound(`No video '${videoId}'.`);
    return row;
  }

  /**
   * Deletes a completed or failed job: its file, then the job itself (404 from then on). Its
   * hold, charge and usage record stay. A queued or running job is 409 `video_not_ready`:
   * the vendor is generating (and billing) it, so it is deleted once it has ended.
   */
  async delete(accountId: string, videoId: string): Promise<VideoView> {
    const row = await this.ownRow(accountId, videoId);
    if (row.status === 'queued' || row.status === 'in_progress') {
      throw videoNotReady(`The video '${videoId}' is ${row.status}; it can be deleted once it is completed or failed.`, row.status);
    }
    // The file first: a failure here leaves the job as it was, and the client can retry.
    await this.deps.storage.delete(contentKey(videoId));
    const deleted = await this.deps.store.markDeleted(videoId, accountId, this.deps.clock.now());
    if (!deleted) throw notFound(`No video '${videoId}'.`);
    return (await this.withCharges([deleted]))[0]!;
  }

  async list(accountId: string, query: VideoListQuery): Promise<VideoPage> {
    if (query.after !== null && !isVideoId(query.after)) throw badRequest('The page cursor must be a video id', { field: 'page.after' });
    const rows = await this.deps.store.list(accountId, query);
    const data = await this.withCharges(rows.slice(0, query.limit));
    return { data, firstId: data[0]?.id ?? null, lastId: data.at(-1)?.id ?? null, hasMore: rows.length > query.limit };
  }

  /**
   * Where the finished file is: 409 `video_not_ready` (with the status) before completion,
   * 410 `video_expired` once retention deleted it.
   */
  async content(accountId: string, videoId: string): Promise<{ key: string; size: number }> {
    const row = await this.ownRow(accountId, videoId);
    if (row.status !== 'completed') {
      throw videoNotReady(`The video '${videoId}' is ${row.status}; its content exists once it is completed.`, row.status);
    }
    const expired = () => videoExpired(videoId, row.expiresAt);
    if (row.contentDeletedAt !== null || (row.expiresAt !== null && row.expiresAt <= this.deps.clock.now())) throw expired();
    const size = await this.deps.storage.size(contentKey(videoId));
    if (size === null) throw expired();
    return { key: contentKey(videoId), size };
  }
}
