import type { KeyPrincipal } from '../shared/principal';
import type { TextModel } from '../catalog/types';
import type { Cancellation } from './cancellation';
import type { CanonicalEvent, CanonicalRequest, InputUsage, RouteHints } from './canonical';
import type { HintNames } from './hints';
import type { RequestOutcome, TraceSpan } from '../shared/telemetry';

/**
 * What a format's decoder produces from a request body, before the model is known. The
 * pipeline resolves `modelId`, validates and clamps the output limit for that model, then
 * applies the canonical rules (`validateCanonicalRequest`). Their refusals name fields by
 * domain key (field-keys.ts): the decoder declares how its format names them, beside this.
 */
export interface DecodedTextRequest {
  /** The id exactly as the client sent it. */
  modelId: string;
  outputLimit: {
    /** The raw value sent (undefined when absent). */
    value: unknown;
    /** Default when absent (4,096 for Chat and Responses; Messages requires the field). */
    fallback: number;
  };
  /** Everything else, in canonical form. */
  request: Omit<CanonicalRequest, 'model' | 'maxOutputTokens'>;
  /** Whether the client asked for a stream. */
  stream: boolean;
  /** How the format names each hint, for the answer to name those the vendor did not take (hints.ts). */
  hintNames: HintNames;
}

/** A started generation: admitted, reserved and with the provider's first event in hand. */
export interface TextGeneration {
  model: TextModel;
  /** The id the client sent, when it differs from the service id (`x-service-model-routed-from`). */
  routedFrom: string | null;
  /** The output limit used when the requested one was lowered (`x-service-max-output-clamped`). */
  clampedTo: number | null;
  /** Canonical events. The `finish` event's usage already carries the estimated reasoning count
   *  when the vendor reported none. Settlement happens when the iteration ends, throws (the
   *  error is a ProviderError: encode it as the format's stream error) or is abandoned. */
  events: AsyncIterable<CanonicalEvent>;
  /**
   * The same events grouped as they arrived together (a vendor's packet), settled as `events`
   * settles: a batch counts as delivered once handed over, so write each one whole.
   */
  batches(): AsyncIterable<CanonicalEvent[]>;
  /**
   * The same events at once, for a client that reads the answer whole (a non-streamed request):
   * settled as `events` settles, without an async step per event when the vendor answered whole.
   * Read one or the other, once.
   */
  allEvents(): Promise<CanonicalEvent[]>;
  /** Hints the serving vendor cannot take, dropped by the field policy's rule, as the client named them. */
  droppedHints: readonly string[];
  /** The prompt's input usage for a stream's start: the vendor's figure when it reported one before its answer, else Tollgate's count. */
  inputUsage(): InputUsage;
}

/**
 * The tokens-per-minute side of admission, as the pipeline needs it: in-flight tokens are
 * reserved before the call and replaced by the real usage when it ends (limits/admission.ts).
 */
export interface TokenWindow {
  reserveTokens(tokens: number): void | Promise<unknown>;
  settleTokens(tokens: number): void;
}

export interface TextGenerationContext {
  /** Aborted when the client goes away: cancels the upstream call. */
  signal: Cancellation;
  requestId: string;
  /** The request's admission ticket, when admission control is on. */
  tokens?: TokenWindow;
  /** Told the amount charged once the request is settled (for the access log). */
  onCharged?(costMicro: bigint): void;
  /**
   * The request's outcome as the plane reports it (access log, metrics): the pipeline fills in
   * the model and vendor once resolved (failures included) and the vendor's time once its call
   * ended, the rest being the gateway's own time.
   */
  outcome?: Pick<RequestOutcome, 'model' | 'vendor' | 'vendorSeconds' | 'deployment' | 'attempts'>;
  /** What routing may use beyond the body (the client's session header, for prompt-cache affinity). */
  route?: RouteHints;
  /** The request's trace span, when tracing is on: the vendor call becomes its child. */
  span?: TraceSpan;
}

export interface TextGenerationService {
  /**
   * Runs the pipeline up to the provider's first event: resolve model → clamp output limit →
   * canonical rules (validateCanonicalRequest) → admit (token window) → reserve → call provider. Throws ApiError before anything is sent
   * (400, 402, 404, 429, 502 when the provider failed before delivering anything).
   */
  start(principal: KeyPrincipal, decoded: DecodedTextRequest, context: TextGenerationContext): Promise<TextGeneration>;
}
