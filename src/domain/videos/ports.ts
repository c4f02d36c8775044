import type { Readable } from 'node:stream';
import type { VideoModel } from '../catalog/types';

/** Where an input image goes in the clip. */
export const VIDEO_INPUT_ROLES = ['first_frame', 'last_frame', 'input_reference', 'reference'] as const;
export type VideoInputRole = (typeof VIDEO_INPUT_ROLES)[number];

export interface VideoInputImage {
  role: VideoInputRole;
  mediaType: string;
  bytes: Buffer;
}

export interface VideoGenerationRequest {
  model: VideoModel;
  prompt: string;
  seconds: number;
  resolution: string;
  ratio: string;
  inputs: readonly VideoInputImage[];
}

/** The vendor's handle of a running generation; stored with the job (JSON), so any instance can poll it. */
/** An input image of a job as kept in storage until the job ends: its role, media type and storage key. */
export interface StoredInput {
  role: string;
  mediaType: string;
  key: string;
}

export type VendorJobHandle = Readonly<Record<string, string | number | boolean | null>>;

export type VendorJobState =
  { status: 'running'; progress: number } | { status: 'completed' } | { status: 'failed'; code: string; message: string };

/**
 * One video vendor. `start` submits the generation and returns the vendor's handle; `poll` asks
 * how it goes; `download` streams the finished MP4. Transport faults throw (ProviderError) and
 * the runner retries them with backoff until the job's deadline; `failed` is the vendor's verdict.
 */
export interface VideoProvider {
  start(request: VideoGenerationRequest): Promise<VendorJobHandle>;
  poll(handle: VendorJobHandle): Promise<VendorJobState>;
  download(handle: VendorJobHandle): Promise<Readable>;
}

/** A job a vendor accepted: its handle, and the deployment that holds it (null for a model without deployments). */
export interface StartedVideoJob {
  handle: VendorJobHandle;
  deployment: string | null;
}

/**
 * The video vendors of the catalog's models. A job is started on the model's vendor or, for a
 * model with deployments, on the first deployment that accepts it (docs/routing.md, Videos);
 * from then on it lives there: every later call goes to `forJob` with that deployment.
 */
export interface VideoProviders {
  start(request: VideoGenerationRequest): Promise<StartedVideoJob>;
  /**
   * The provider of the deployment a job is bound to; `null` names the model's first deployment
   * (its own vendor without a list: a job started before routing). Null when that deployment is
   * no longer in the catalog or configured.
   */
  forJob(model: VideoModel, deployment: string | null): VideoProvider | null;
}

/** Finished files and job inputs, by key (`videos/<id>.mp4`, `inputs/<id>/<n>`). */
export interface VideoStorage {
  /** Writes the whole stream; returns its size in bytes. Replaces an existing object. */
  write(key: string, content: Readable | Buffer): Promise<number>;
  read(key: string): Promise<Buffer>;
  /** Size in bytes, or null when absent. */
  size(key: string): Promise<number | null>;
  /** A byte range, both ends inclusive. */
  openRange(key: string, start: number, end: number): Readable;
  /** Deleting what is absent is fine. */
  delete(key: string): Promise<void>;
}

/** The durable queue of job steps: each step runs once, on one instance, at or after its delay. */
export interface VideoJobQueue {
  enqueue(step: VideoJobStep, delayMs: number): Promise<void>;
}

export interface VideoJobStep {
  videoId: string;
  /** Polls made so far (drives the backoff). */
  attempt: number;
}
