import type { Cancellation } from '../domain/generation/cancellation';
import type { VendorCapabilities } from '../domain/generation/canonical';
import type { CanonicalRequest, ProviderEvent, TextProvider, VendorHints } from '../domain/generation/canonical';
import type { VendorEndpoint } from '../domain/catalog/vendors';
import { ProviderError } from '../domain/generation/errors';
import { MessagesStreamDecoder } from '../protocols/anthropic-messages/stream-decoder';
import { anthropicHints, toMessagesRequest } from '../protocols/anthropic-messages/vendor-request';
import type { AnthropicRequestPlan } from '../protocols/anthropic-messages/vendor-types';
import { callPrepared } from './prepared-call';
import { eventStreamMessages, headerString } from './transport/aws-event-stream';
import type { VendorCall, VendorTransport } from './transport/client';
import { redact, vendorErrorMessage } from './transport/errors';
import { AwsSigner } from './transport/sigv4';

/** The Messages version Bedrock's Claude models take in the body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';
const EVENT_STREAM = 'application/vnd.amazon.eventstream';
/** The geography prefix of a cross-region inference profile id (`us.anthropic.claude-…`). */
const INFERENCE_PROFILE_PREFIX = /^(?:us|us-gov|eu|apac|jp|au|ca|global)\.(?=[a-z0-9-]+\.)/;

/** The HTTP status Bedrock gives each exception, for one that arrives inside a stream. */
const EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  throttlingException: 429,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelStreamErrorException: 424,
  modelTimeoutException: 408,
  validationException: 400,
};

/**
 * Claude on Amazon Bedrock: Anthropic's Messages body without `model` and `stream` (the model
 * id is in the path, `anthropic_version` and `anthropic_beta` in the body), through
 * `POST {base}/model/{modelId}/invoke` or `/invoke-with-response-stream`, signed with SigV4
 * (service `bedrock`). A stream is AWS event-stream framing whose `chunk` events carry each
 * Messages stream event as base64 JSON; an exception message ends it. The catalog's
 * `vendor_model_id` is the Bedrock model or inference-profile id
 * (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`).
 */
export class BedrockProvider implements TextProvider {
  private readonly signer: AwsSigner;

  constructor(
    private readonly endpoint: VendorEndpoint,
    private readonly http: VendorTransport,
  ) {
    this.signer = new AwsSigner(
      { accessKeyId: endpoint.apiKey ?? '', secretAccessKey: endpoint.secretKey ?? '' },
      endpoint.region ?? 'us-east-1',
      'bedrock',
    );
  }

  /** Function tools; Bedrock has no MCP connector. */
  readonly capabilities: VendorCapabilities = { customTools: false, mcpServers: false, mcpCalls: false, mcpApprovals: false };

  hints(request: CanonicalRequest): VendorHints {
    return anthropicHints(request);
  }

  validate(request: CanonicalRequest): AnthropicRequestPlan {
    return toMessagesRequest(request);
  }

  generate(request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    const plan = this.validate(request);
    return plan.body.stream ? this.stream(plan, request, signal) : this.whole(plan, request, signal);
  }

  /** A non-streamed call is a whole answer (prepared-call.ts): signed, sent, and decoded by Anthropic's answer decoder. */
  private whole(plan: AnthropicRequestPlan, request: CanonicalRequest, signal: Cancellation): AsyncIterable<ProviderEvent> {
    return callPrepared(this.http, {
      vendor: this.endpoint.vendor,
      signal,
      decoder: new MessagesStreamDecoder(this.endpoint.vendor),
      streamed: false,
      prepare: () => this.invokeCall(plan, request, signal, 'invoke', 'application/json'),
    });
  }

  private async *stream(
    plan: AnthropicRequestPlan,
    request: CanonicalRequest,
    signal: Cancellation,
  ): AsyncGenerator<ProviderEvent, void, undefined> {
    const call = await this.invokeCall(plan, request, signal, 'invoke-with-response-stream', EVENT_STREAM);
    const decoder = new MessagesStreamDecoder(this.endpoint.vendor);
    try {
      for await (const message of eventStreamMessages(this.http.streamBytes(call, EVENT_STREAM))) {
        if (decoder.done) break;
        const type = headerString(message, ':message-type');
        if (type === 'exception' || type === 'error')
          throw this.exception(message.body, headerString(message, ':exception-type') ?? headerString(message, ':error-code'));
        if (headerString(message, ':event-type') !== 'chunk') continue;
        for (const event of decoder.push(chunkPayload(message.body, this.endpoint.vendor))) yield event;
      }
    } catch (error) {
      if (decoder.done) return;
      if (error instanceof ProviderError) throw error;
      // The codec's own refusals (a bad CRC, a body that ends inside a message).
      throw new ProviderError(
        `${this.endpoint.vendor} sent an event stream that cannot be read (${error instanceof Error ? error.message : String(error)}).`,
        this.endpoint.vendor,
        null,
        undefined,
        'invalid_answer',
      );
    }
    yield* decoder.end();
  }

  /**
   * Bedrock's CountTokens (`POST /model/{modelId}/count-tokens`), free: the InvokeModel body,
   * base64, in `{"input": {"invokeModel": {"body"}}}`; the answer is `{"inputTokens": n}`. It
   * takes foundation-model ids, not cross-region inference profiles: a profile's geography
   * prefix (`us.`, `eu.`, `global.`…) is dropped for the count.
   */
  async countTokens(request: CanonicalRequest, signal: Cancellation): Promise<number> {
    const invokeBody = Buffer.from(JSON.stringify(this.invokeBody(this.validate(request)))).toString('base64');
    const modelId = request.model.vendorModelId.replace(INFERENCE_PROFILE_PREFIX, '');
    const call = await this.signedCall(
      `/model/${encodeURIComponent(modelId)}/count-tokens`,
      { input: { invokeModel: { body: invokeBody } } },
      'application/json',
      signal,
    );
    const answer = (await this.http.postJson(call)) as { inputTokens?: unknown } | null;
    if (typeof answer?.inputTokens !== 'number')
      throw new ProviderError(
        `${this.endpoint.vendor} answered CountTokens without inputTokens.`,
        this.endpoint.vendor,
        null,
        undefined,
        'invalid_answer',
      );
    return answer.inputTokens;
  }

  /** The Messages body as InvokeModel takes it: the model in the path, no `stream`, betas in the body. */
  private invokeBody(plan: AnthropicRequestPlan): Record<string, unknown> {
    const { model: _model, stream: _stream, ...rest } = plan.body;
    return {
      anthropic_version: BEDROCK_ANTHROPIC_VERSION,
      ...(plan.betas.length > 0 ? { anthropic_beta: plan.betas } : {}),
      ...rest,
    };
  }

  private invokeCall(
    plan: AnthropicRequestPlan,
    request: CanonicalRequest,
    signal: Cancellation,
    action: string,
    accept: string,
  ): Promise<VendorCall> {
    return this.signedCall(`/model/${encodeURIComponent(request.model.vendorModelId)}/${action}`, this.invokeBody(plan), accept, signal);
  }

  private async signedCall(path: string, body: unknown, accept: string, signal: Cancellation): Promise<VendorCall> {
    const bodyText = JSON.stringify(body);
    const url = new URL(this.endpoint.baseUrl + path);
    const headers = await this.signer.signPost(url, { 'content-type': 'application/json', accept }, bodyText);
    delete headers.host; // the transport's connection sets it
    return {
      vendor: this.endpoint.vendor,
      baseUrl: this.endpoint.baseUrl,
      path,
      headers,
      body,
      bodyText,
      signal,
      secrets: [this.endpoint.apiKey, this.endpoint.secretKey ?? null],
    };
  }

  private exception(body: Uint8Array, type: string | null): ProviderError {
    const detail = vendorErrorMessage(Buffer.from(body).toString('utf8'));
    const status = (type === null ? undefined : EXCEPTION_STATUS[type]) ?? 500;
    const message = `${this.endpoint.vendor} ended its stream with ${type ?? 'an exception'}${detail ? `: ${detail}` : '.'}`;
    return new ProviderError(redact(message, [this.endpoint.apiKey, this.endpoint.secretKey ?? null]), this.endpoint.vendor, status);
  }
}

/** A `chunk` event's payload: `{"bytes": "<base64 of one Messages stream event's JSON>"}`. */
function chunkPayload(body: Uint8Array, vendor: string): string {
  let parsed: { bytes?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(body).toString('utf8')) as { bytes?: unknown };
  } catch {
    throw new ProviderError(`${vendor} sent a stream chunk that is not JSON.`, vendor, null, undefined, 'invalid_answer');
  }
  if (typeof parsed.bytes !== 'string')
    throw new ProviderError(`${vendor} sent a stream chunk without bytes.`, vendor, null, undefined, 'invalid_answer');
  return Buffer.from(parsed.bytes, 'base64').toString('utf8');
}
