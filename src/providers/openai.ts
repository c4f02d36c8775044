import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/canonical';
import type { CanonicalHint, CanonicalRequest, ProviderEvent, TextProvider, VendorHints } from '../domain/generation/canonical';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import { ChatStreamDecoder } from '../protocols/openai-chat/stream-decoder';
import { OPENAI_CHAT_OPTIONS, toChatRequest } from '../protocols/openai-chat/vendor-request';
import { ResponsesStreamDecoder } from '../protocols/openai-responses/stream-decoder';
import { toResponsesRequest } from '../protocols/openai-responses/vendor-request';
import { callVendor } from './text-call';
import type { VendorCall, VendorTransport } from './transport/client';

/**
 * Which OpenAI API serves a request. `auto` (default): the Responses API for models with an
 * effort setting (o-series reasoning models, where OpenAI develops reasoning features first)
 * and Chat Completions for the others; MCP tools and MCP items of earlier turns always go to
 * Responses, the only OpenAI API that calls an MCP server itself.
 */
export type OpenAIUpstream = 'auto' | 'chat' | 'responses';

export interface OpenAIProviderOptions {
  upstream?: OpenAIUpstream;
}

/** Sampling values, which OpenAI's reasoning models refuse. */
const SAMPLING: readonly CanonicalHint[] = ['temperature', 'topP', 'frequencyPenalty', 'presencePenalty'];
const CHAT_HINTS: readonly CanonicalHint[] = [...SAMPLING, 'seed', 'verbosity', 'parallelToolCalls'];
/** The Responses API has no penalties and no seed. */
const RESPONSES_HINTS: readonly CanonicalHint[] = ['temperature', 'topP', 'verbosity', 'parallelToolCalls'];
const withoutSampling = (hints: readonly CanonicalHint[]): VendorHints => new Set(hints.filter((hint) => !SAMPLING.includes(hint)));
/** The hints each OpenAI API takes, for models without and with an effort setting (reasoning models). */
const OPENAI_HINTS: Readonly<Record<'chat' | 'responses', readonly [VendorHints, VendorHints]>> = {
  chat: [new Set(CHAT_HINTS), withoutSampling(CHAT_HINTS)],
  responses: [new Set(RESPONSES_HINTS), withoutSampling(RESPONSES_HINTS)],
};

export class OpenAIProvider implements TextProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
    private readonly options: OpenAIProviderOptions = {},
  ) {}

  /** OpenAI serves every tool kind, MCP approvals and call limits included. */
  readonly capabilities: VendorCapabilities = {
    customTools: true,
    mcpServers: true,
    mcpCalls: true,
    mcpApprovals: true,
    mcpCallLimit: true,
  };

  hints(request: CanonicalRequest): VendorHints {
    return OPENAI_HINTS[this.upstreamFor(request)][request.model.effort === 'openai-effort' ? 1 : 0];
  }

  upstreamFor(request: CanonicalRequest): 'chat' | 'responses' {
    if (request.tools.some((tool) => tool.type === 'mcp') || request.messages.some((message) => message.role === 'mcp')) return 'responses';
    const upstream = this.options.upstream ?? 'auto';
    if (upstream !== 'auto') return upstream;
    return request.model.effort === 'openai-effort' ? 'responses' : 'chat';
  }

  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    const vendor = this.endpoint.vendor;
    const useResponses = this.upstreamFor(request) === 'responses';
    const call: VendorCall = {
      vendor,
      baseUrl: this.endpoint.baseUrl,
      path: useResponses ? '/responses' : '/chat/completions',
      headers: this.endpoint.apiKey ? { authorization: `Bearer ${this.endpoint.apiKey}` } : {},
      body: useResponses ? toResponsesRequest(request) : toChatRequest(request, OPENAI_CHAT_OPTIONS),
      signal,
      secrets: [this.endpoint.apiKey],
    };
    // A client that reads the answer whole gets a non-streamed call (toChatRequest, toResponsesRequest).
    return callVendor(
      this.http,
      call,
      useResponses ? new ResponsesStreamDecoder(vendor) : new ChatStreamDecoder(vendor),
      request.stream !== false,
    );
  }
}
