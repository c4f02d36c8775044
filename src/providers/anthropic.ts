import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/capabilities';
import type { CanonicalEvent, CanonicalRequest, TextProvider } from '../domain/generation/canonical';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import { MessagesStreamDecoder } from '../protocols/anthropic-messages/stream-decoder';
import { ANTHROPIC_VERSION, toMessagesRequest } from '../protocols/anthropic-messages/vendor-request';
import type { AnthropicRequestPlan } from '../protocols/anthropic-messages/vendor-types';
import { callVendor } from './text-call';
import type { VendorTransport } from './transport/client';

/** Anthropic Messages (`POST {ANTHROPIC_BASE_URL}/v1/messages`, streamed). */
export class AnthropicProvider implements TextProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {}

  /** MCP servers run by Anthropic (`mcp_servers`), calling them without asking; no freeform custom tools. */
  readonly capabilities: VendorCapabilities = { customTools: false, mcpServers: true, mcpCalls: true, mcpApprovals: false };

  /** Throws 400 for MCP settings the Anthropic request cannot carry (headers other than authorization). Pure. */
  validate(request: CanonicalRequest): AnthropicRequestPlan {
    return toMessagesRequest(request);
  }

  /** Encodes synchronously (a 400 is thrown by this call, before any upstream request), then calls Anthropic. */
  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<CanonicalEvent> {
    const { body, betas } = this.validate(request);
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (this.endpoint.apiKey) headers['x-api-key'] = this.endpoint.apiKey;
    if (betas.length > 0) headers['anthropic-beta'] = betas.join(',');
    const call = { vendor: this.endpoint.vendor, baseUrl: this.endpoint.baseUrl, path: '/v1/messages', headers, body, signal, secrets: [this.endpoint.apiKey] };
    return callVendor(this.http, call, new MessagesStreamDecoder(this.endpoint.vendor), body.stream);
  }
}
