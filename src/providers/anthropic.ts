import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/canonical';
import type { CanonicalRequest, ProviderEvent, TextProvider, VendorHints } from '../domain/generation/canonical';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import { MessagesStreamDecoder } from '../protocols/anthropic-messages/stream-decoder';
import { ANTHROPIC_VERSION, anthropicHints, toMessagesRequest } from '../protocols/anthropic-messages/vendor-request';
import type { AnthropicRequestPlan } from '../protocols/anthropic-messages/vendor-types';
import { ProviderError } from '../domain/generation/errors';
import { callVendor } from './text-call';
import type { VendorTransport } from './transport/client';

/** The fields of a Messages body that count_tokens takes (the prompt; no output limit or sampling). */
const COUNT_TOKENS_BODY_FIELDS = [
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'mcp_servers',
  'context_management',
  'cache_control',
] as const;

export function countTokensBody(body: AnthropicRequestPlan['body']): Record<string, unknown> {
  return Object.fromEntries(COUNT_TOKENS_BODY_FIELDS.flatMap((field) => (body[field] !== undefined ? [[field, body[field]]] : [])));
}

/** Anthropic Messages (`POST {ANTHROPIC_BASE_URL}/v1/messages`, streamed). */
export class AnthropicProvider implements TextProvider {
  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {}

  /** MCP servers run by Anthropic (`mcp_servers`), calling them without asking; no freeform custom tools. */
  readonly capabilities: VendorCapabilities = { customTools: false, mcpServers: true, mcpCalls: true, mcpApprovals: false };

  hints(request: CanonicalRequest): VendorHints {
    return anthropicHints(request);
  }

  /** Throws 400 for MCP settings the Anthropic request cannot carry (headers other than authorization). Pure. */
  validate(request: CanonicalRequest): AnthropicRequestPlan {
    return toMessagesRequest(request);
  }

  /** Encodes synchronously (a 400 is thrown by this call, before any upstream request), then calls Anthropic. */
  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    const plan = this.validate(request);
    const call = {
      vendor: this.endpoint.vendor,
      baseUrl: this.endpoint.baseUrl,
      path: '/v1/messages',
      headers: this.headers(plan),
      body: plan.body,
      signal,
      secrets: [this.endpoint.apiKey],
    };
    return callVendor(this.http, call, new MessagesStreamDecoder(this.endpoint.vendor), plan.body.stream);
  }

  /** Anthropic's own count (`POST /v1/messages/count_tokens`): the request's prompt fields, with the same headers. */
  async countTokens(request: CanonicalRequest, signal: Cancellation): Promise<number> {
    const plan = this.validate(request);
    const call = {
      vendor: this.endpoint.vendor,
      baseUrl: this.endpoint.baseUrl,
      path: '/v1/messages/count_tokens',
      headers: this.headers(plan),
      body: countTokensBody(plan.body),
      signal,
      secrets: [this.endpoint.apiKey],
    };
    const answer = (await this.http.postJson(call)) as { input_tokens?: unknown } | null;
    if (typeof answer?.input_tokens !== 'number')
      throw new ProviderError(`${this.endpoint.vendor} answered count_tokens without input_tokens.`, this.endpoint.vendor);
    return answer.input_tokens;
  }

  private headers(plan: AnthropicRequestPlan): Record<string, string> {
    const headers: Record<string, string> = { 'anthropic-version': plan.version ?? ANTHROPIC_VERSION };
    if (this.endpoint.apiKey) headers['x-api-key'] = this.endpoint.apiKey;
    if (plan.betas.length > 0) headers['anthropic-beta'] = plan.betas.join(',');
    return headers;
  }
}
