import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/capabilities';
import type { CanonicalRequest, ProviderEvent, TextProvider } from '../domain/generation/canonical';
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

export class OpenAIProvider implements TextProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
    private readonly options: OpenAIProviderOptions = {},
  ) {}

  /** OpenAI serves every tool kind, MCP approvals and call limits included. */
  readonly capabilities: VendorCapabilities = { customTools: true, mcpServers: true, mcpCalls: true, mcpApprovals: true, mcpCallLimit: true };

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
    return callVendor(this.http, call, useResponses ? new ResponsesStreamDecoder(vendor) : new ChatStreamDecoder(vendor), request.stream !== false);
  }
}
