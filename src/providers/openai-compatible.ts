import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/canonical';
import type { CanonicalHint, CanonicalRequest, ProviderEvent, TextProvider, VendorHints } from '../domain/generation/canonical';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import { ChatStreamDecoder } from '../protocols/openai-chat/stream-decoder';
import { toChatRequest, type ChatEgressOptions } from '../protocols/openai-chat/vendor-request';
import { callVendor } from './text-call';
import type { VendorTransport } from './transport/client';

/**
 * An OpenAI-compatible vendor is configuration, not code: the Chat Completions vendor codec
 * with a base URL (`<VENDOR>_BASE_URL`, including its version path, e.g. `.../v1`), extra
 * headers, the output-limit field it reads and the body fields it rejects.
 */
export interface CompatibleVendorConfig {
  /** Sent with every request (besides `Authorization`, which is sent only when a key is set). */
  headers: Record<string, string>;
  /** Most compatible servers read `max_tokens` only (default). */
  maxTokensField: ChatEgressOptions['maxTokensField'];
  /** Top-level Chat body fields removed before sending. */
  excludeParams: readonly string[];
}

export const DEFAULT_COMPATIBLE_CONFIG: CompatibleVendorConfig = { headers: {}, maxTokensField: 'max_tokens', excludeParams: [] };

/**
 * Known differences of well-known compatible vendors (keyed by the catalog's vendor name);
 * the registry's `compatible` option adds entries or overrides them. Kept to what is needed.
 */
export const KNOWN_COMPATIBLE_VENDORS: Readonly<Record<string, Partial<CompatibleVendorConfig>>> = {
  // Mistral refuses unknown body fields; it has no `user`, and sends usage in its last chunk
  // without being asked (no `stream_options`).
  mistral: { excludeParams: ['user', 'stream_options'] },
};

/** The Chat body field of each hint a compatible server may take (OpenAI's `verbosity` is not one of them). */
const COMPATIBLE_HINT_FIELDS: Readonly<Partial<Record<CanonicalHint, string>>> = {
  temperature: 'temperature',
  topP: 'top_p',
  frequencyPenalty: 'frequency_penalty',
  presencePenalty: 'presence_penalty',
  seed: 'seed',
  parallelToolCalls: 'parallel_tool_calls',
};

export class OpenAICompatibleProvider implements TextProvider {
  private readonly config: CompatibleVendorConfig;
  /** The hints it takes: those of the Chat format it has not excluded. */
  private readonly takes: VendorHints;

  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
    config: Partial<CompatibleVendorConfig> = {},
  ) {
    this.config = { ...DEFAULT_COMPATIBLE_CONFIG, ...KNOWN_COMPATIBLE_VENDORS[endpoint.vendor], ...config };
    const fields = Object.entries(COMPATIBLE_HINT_FIELDS) as [CanonicalHint, string][];
    this.takes = new Set(fields.filter(([, field]) => !this.config.excludeParams.includes(field)).map(([hint]) => hint));
  }

  /** Function tools only: no compatible server runs MCP servers or freeform tools. */
  readonly capabilities: VendorCapabilities = { customTools: false, mcpServers: false, mcpCalls: false, mcpApprovals: false };

  hints(): VendorHints {
    return this.takes;
  }

  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    const headers: Record<string, string> = { ...this.config.headers };
    if (this.endpoint.apiKey) headers.authorization = `Bearer ${this.endpoint.apiKey}`;
    const body = toChatRequest(request, {
      maxTokensField: this.config.maxTokensField,
      excludeParams: this.config.excludeParams,
    });
    const call = {
      vendor: this.endpoint.vendor,
      baseUrl: this.endpoint.baseUrl,
      path: '/chat/completions',
      headers,
      body,
      signal,
      secrets: [this.endpoint.apiKey],
    };
    // A client that reads the answer whole gets a non-streamed upstream call (toChatRequest).
    return callVendor(this.http, call, new ChatStreamDecoder(this.endpoint.vendor), request.stream !== false);
  }
}
