import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/canonical';
import type { CanonicalHint, CanonicalRequest, ProviderEvent, TextProvider, VendorHints } from '../domain/generation/canonical';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import { ChatStreamDecoder } from '../protocols/openai-chat/stream-decoder';
import { OPENAI_CHAT_OPTIONS, toChatRequest } from '../protocols/openai-chat/vendor-request';
import { callVendor } from './text-call';
import type { VendorCall, VendorTransport } from './transport/client';

const SAMPLING: readonly CanonicalHint[] = ['temperature', 'topP', 'frequencyPenalty', 'presencePenalty'];
const CHAT_HINTS: VendorHints = new Set<CanonicalHint>([...SAMPLING, 'seed', 'parallelToolCalls']);
/** Reasoning models refuse sampling values on Azure as on OpenAI. */
const EFFORT_HINTS: VendorHints = new Set<CanonicalHint>(['seed', 'parallelToolCalls']);

/**
 * Azure OpenAI: OpenAI's models in an Azure resource (`https://<resource>.openai.azure.com`).
 * Chat Completions on a deployment's path,
 * `POST {base}/openai/deployments/{deployment}/chat/completions?api-version=…`, the key in the
 * `api-key` header; the body and the stream are OpenAI's (Azure adds content-filter results,
 * and a first chunk without choices, which the Chat decoder passes over). The catalog's
 * `vendor_model_id` of an Azure deployment is the deployment's name.
 */
export class AzureOpenAIProvider implements TextProvider {
  private readonly query: string;

  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {
    this.query = `?api-version=${encodeURIComponent(endpoint.apiVersion ?? '2024-10-21')}`;
  }

  /** Function tools through Chat Completions; Azure runs no MCP server for Chat. */
  readonly capabilities: VendorCapabilities = { customTools: false, mcpServers: false, mcpCalls: false, mcpApprovals: false };

  hints(request: CanonicalRequest): VendorHints {
    return request.model.effort === 'openai-effort' ? EFFORT_HINTS : CHAT_HINTS;
  }

  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    const vendor = this.endpoint.vendor;
    const call: VendorCall = {
      vendor,
      baseUrl: this.endpoint.baseUrl,
      path: `/openai/deployments/${encodeURIComponent(request.model.vendorModelId)}/chat/completions${this.query}`,
      headers: this.endpoint.apiKey ? { 'api-key': this.endpoint.apiKey } : {},
      body: toChatRequest(request, OPENAI_CHAT_OPTIONS),
      signal,
      secrets: [this.endpoint.apiKey],
    };
    return callVendor(this.http, call, new ChatStreamDecoder(vendor), request.stream !== false);
  }
}
