import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/canonical';
import type { CanonicalRequest, ProviderEvent, TextProvider, VendorHints } from '../domain/generation/canonical';
import { vertexPublisher, type ServiceAccountKey, type VendorEndpoint, type VertexPublisher } from '../domain/catalog/vendors';
import { ProviderError } from '../domain/generation/errors';
import { MessagesStreamDecoder } from '../protocols/anthropic-messages/stream-decoder';
import { anthropicHints, toMessagesRequest } from '../protocols/anthropic-messages/vendor-request';
import { GenerateContentStreamDecoder } from '../protocols/gemini/stream-decoder';
import { toGenerateContentRequest } from '../protocols/gemini/vendor-request';
import type { StreamDecoder } from '../protocols/streams';
import { countTokensBody } from './anthropic';
import { countPromptTokens } from '../domain/generation/prompt-size';
import { ChatStreamDecoder } from '../protocols/openai-chat/stream-decoder';
import { toChatRequest } from '../protocols/openai-chat/vendor-request';
import { GEMINI_HINTS } from './gemini';
import { callPrepared } from './prepared-call';
import type { VendorCall, VendorTransport } from './transport/client';
import { ServiceAccountTokens } from './transport/google-token';

/** The Messages version Vertex AI's Claude models take in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** One publisher's request, ready but for its access token. */
interface PublisherCall {
  path: string;
  headers: Record<string, string>;
  body: unknown;
  decoder: StreamDecoder;
  streamed: boolean;
}

/**
 * Google Vertex AI, for Claude and Gemini: each publisher's model under the vendor's project
 * and location, `POST {base}/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`.
 * Claude (`publishers/anthropic`, `:rawPredict` or `:streamRawPredict`): Anthropic's Messages
 * body without `model`, with `anthropic_version: vertex-2023-10-16`, betas in the
 * `anthropic-beta` header; the answer and stream are Anthropic's. Gemini (`publishers/google`,
 * `:generateContent` or `:streamGenerateContent?alt=sse`): the Gemini API's body and answers.
 * Open models (Llama and others, ids `publisher/model`): Vertex's OpenAI-compatible endpoint,
 * `POST {base}/v1/projects/{project}/locations/{region}/endpoints/openapi/chat/completions`, the
 * Chat body with the id as `model`; Chat answers and streams.
 * Which one a model is, its id says (`claude-…`, `gemini-…`, `meta/…`; checked when the catalog loads).
 * Every call carries an OAuth access token of the vendor's service account (google-token.ts).
 */
export class VertexProvider implements TextProvider {
  private readonly tokens: ServiceAccountTokens;
  private readonly publishers: string;
  /** Vertex's OpenAI-compatible Chat Completions path, for open models. */
  private readonly openapi: string;

  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {
    if (!endpoint.serviceAccount) throw new ProviderError(`${endpoint.vendor} has no service account key.`, endpoint.vendor);
    this.tokens = tokensOf(endpoint.vendor, endpoint.serviceAccount, http);
    const project = encodeURIComponent(endpoint.project ?? endpoint.serviceAccount.projectId ?? '');
    const location = `/v1/projects/${project}/locations/${encodeURIComponent(endpoint.region ?? 'global')}`;
    this.publishers = `${location}/publishers`;
    this.openapi = `${location}/endpoints/openapi/chat/completions`;
  }

  /** Function tools; Vertex AI runs no MCP server for any publisher. */
  readonly capabilities: VendorCapabilities = { customTools: false, mcpServers: false, mcpCalls: false, mcpApprovals: false };

  hints(request: CanonicalRequest): VendorHints {
    const publisher = this.publisher(request);
    return publisher === 'anthropic' ? anthropicHints(request) : publisher === 'google' ? GEMINI_HINTS : OPEN_MODEL_HINTS;
  }

  /** Claude: what the Messages body cannot carry is refused (400) before anything is reserved. */
  validate(request: CanonicalRequest): void {
    if (this.publisher(request) === 'anthropic') toMessagesRequest(request);
  }

  /** Encodes synchronously (a 400 is thrown by this call), then calls Vertex AI with a token. */
  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    const publisher = this.publisher(request);
    const call =
      publisher === 'anthropic'
        ? this.claudeCall(request)
        : publisher === 'google'
          ? this.geminiCall(request)
          : this.openModelCall(request);
    return this.authorized(call, signal);
  }

  /**
   * Vertex AI's own count, free: Claude's `publishers/anthropic/models/count-tokens:rawPredict`
   * (the Messages count body, `model` included), Gemini's `:countTokens` (the prompt's contents,
   * system instruction and tools). Vertex has no count for open models: Tollgate's tokenizer counts.
   */
  async countTokens(request: CanonicalRequest, signal: Cancellation): Promise<number> {
    const publisher = this.publisher(request);
    if (publisher === 'openapi') return countPromptTokens(request);
    const claude = publisher === 'anthropic';
    const call = await this.withToken(claude ? this.claudeCount(request) : this.geminiCount(request), signal);
    let answer: unknown;
    try {
      answer = await this.http.postJson(call);
    } catch (error) {
      this.dropRefusedToken(error, call);
      throw error;
    }
    const count = claude
      ? (answer as { input_tokens?: unknown } | null)?.input_tokens
      : (answer as { totalTokens?: unknown } | null)?.totalTokens;
    if (typeof count !== 'number')
      throw new ProviderError(
        `${this.endpoint.vendor} answered its token count without ${claude ? 'input_tokens' : 'totalTokens'}.`,
        this.endpoint.vendor,
        null,
        undefined,
        'invalid_answer',
      );
    return count;
  }

  private claudeCount(request: CanonicalRequest): Omit<PublisherCall, 'decoder' | 'streamed'> {
    const plan = toMessagesRequest(request);
    return {
      path: `${this.publishers}/anthropic/models/count-tokens:rawPredict`,
      headers: plan.betas.length > 0 ? { 'anthropic-beta': plan.betas.join(',') } : {},
      body: { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...countTokensBody(plan.body) },
    };
  }

  private geminiCount(request: CanonicalRequest): Omit<PublisherCall, 'decoder' | 'streamed'> {
    const { contents, systemInstruction, tools } = toGenerateContentRequest(request);
    return {
      path: `${this.publishers}/google/models/${modelSegment(request)}:countTokens`,
      headers: {},
      body: { contents, ...(systemInstruction ? { systemInstruction } : {}), ...(tools ? { tools } : {}) },
    };
  }

  private openModelCall(request: CanonicalRequest): PublisherCall {
    const streamed = request.stream !== false;
    return {
      path: this.openapi,
      headers: {},
      body: toChatRequest(request, { maxTokensField: 'max_tokens' }),
      decoder: new ChatStreamDecoder(this.endpoint.vendor),
      streamed,
    };
  }

  private claudeCall(request: CanonicalRequest): PublisherCall {
    const plan = toMessagesRequest(request);
    const { model: _model, ...rest } = plan.body;
    return {
      path: `${this.publishers}/anthropic/models/${modelSegment(request)}:${plan.body.stream ? 'streamRawPredict' : 'rawPredict'}`,
      headers: plan.betas.length > 0 ? { 'anthropic-beta': plan.betas.join(',') } : {},
      body: { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest },
      decoder: new MessagesStreamDecoder(this.endpoint.vendor),
      streamed: plan.body.stream,
    };
  }

  private geminiCall(request: CanonicalRequest): PublisherCall {
    const streamed = request.stream !== false;
    return {
      path: `${this.publishers}/google/models/${modelSegment(request)}:${streamed ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
      headers: {},
      body: toGenerateContentRequest(request),
      decoder: new GenerateContentStreamDecoder(this.endpoint.vendor),
      streamed,
    };
  }

  /** The call with the service account's access token. */
  private authorized(call: PublisherCall, signal: Cancellation): AsyncIterable<ProviderEvent> {
    return callPrepared(this.http, {
      vendor: this.endpoint.vendor,
      signal,
      decoder: call.decoder,
      streamed: call.streamed,
      prepare: () => this.withToken(call, signal),
      failed: (error, sent) => this.dropRefusedToken(error, sent),
    });
  }

  private async withToken(call: Omit<PublisherCall, 'decoder' | 'streamed'>, signal: Cancellation): Promise<VendorCall> {
    const token = await this.tokens.get();
    const { vendor, baseUrl } = this.endpoint;
    return {
      vendor,
      baseUrl,
      path: call.path,
      headers: { ...call.headers, authorization: `Bearer ${token}` },
      body: call.body,
      signal,
      secrets: [token],
    };
  }

  /** A token Vertex refuses (401: revoked, or minted under a wrong clock) is not kept for the next requests. */
  private dropRefusedToken(error: unknown, call: VendorCall): void {
    if (error instanceof ProviderError && error.vendorStatus === 401) this.tokens.forget(call.secrets[0]!);
  }

  private publisher(request: CanonicalRequest): VertexPublisher {
    const publisher = vertexPublisher(request.model.vendorModelId);
    if (publisher === null)
      throw new ProviderError(
        `${this.endpoint.vendor} serves Claude, Gemini and open ("publisher/model") models only, not '${request.model.vendorModelId}'.`,
        this.endpoint.vendor,
      );
    return publisher;
  }
}

/**
 * One token cache per service account key (the key object configuration read once): a vendor's
 * direct models and its deployments of routed models get providers of their own, which share it.
 */
const tokenCaches = new WeakMap<ServiceAccountKey, ServiceAccountTokens>();

function tokensOf(vendor: string, key: ServiceAccountKey, http: VendorTransport): ServiceAccountTokens {
  let tokens = tokenCaches.get(key);
  if (tokens === undefined) tokenCaches.set(key, (tokens = new ServiceAccountTokens(vendor, key, http)));
  return tokens;
}

/** What Vertex's Chat Completions endpoint takes of the sampling settings, for open models. */
const OPEN_MODEL_HINTS: VendorHints = new Set(['temperature', 'topP']);

/** Vertex AI's model ids carry their version after `@` (`claude-sonnet-4-5@20250929`), which a path keeps as it is. */
const modelSegment = (request: CanonicalRequest): string => encodeURIComponent(request.model.vendorModelId).replace(/%40/g, '@');
