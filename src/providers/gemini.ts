import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/canonical';
import type { CanonicalRequest, ProviderEvent, TextProvider, VendorHints } from '../domain/generation/canonical';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import { GenerateContentStreamDecoder } from '../protocols/gemini/stream-decoder';
import { generateContentPath, toGenerateContentRequest } from '../protocols/gemini/vendor-request';
import { callVendor } from './text-call';
import type { VendorCall, VendorTransport } from './transport/client';

export const GEMINI_HINTS: VendorHints = new Set(['temperature', 'topP', 'frequencyPenalty', 'presencePenalty']);

/**
 * Gemini API (`POST {GEMINI_BASE_URL}/v1beta/models/{model}:streamGenerateContent?alt=sse`, or
 * `:generateContent` when the client reads the answer whole).
 * The key goes in the `x-goog-api-key` header, never in the URL (URLs end up in logs).
 */
export class GeminiProvider implements TextProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {}

  /** Function tools only: Gemini runs no MCP server and has no freeform tools. */
  readonly capabilities: VendorCapabilities = { customTools: false, mcpServers: false, mcpCalls: false, mcpApprovals: false };

  /** Sampling and penalties; Gemini has no parallel tool-call control, and no seed or verbosity is sent. */
  hints(): VendorHints {
    return GEMINI_HINTS;
  }

  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    const stream = request.stream !== false;
    const call: VendorCall = {
      vendor: this.endpoint.vendor,
      baseUrl: this.endpoint.baseUrl,
      path: generateContentPath(request.model.vendorModelId, stream),
      headers: this.endpoint.apiKey ? { 'x-goog-api-key': this.endpoint.apiKey } : {},
      body: toGenerateContentRequest(request),
      signal,
      secrets: [this.endpoint.apiKey],
    };
    return callVendor(this.http, call, new GenerateContentStreamDecoder(this.endpoint.vendor), stream);
  }
}
