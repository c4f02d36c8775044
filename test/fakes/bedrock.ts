import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import type { Checksum, SourceData } from '@smithy/types';
import { newEventStreamCodec } from '../../src/providers/transport/aws-event-stream';
import { delay, pieces, startFakeVendor, type FakeReplyControls, type FakeVendor } from './openai';

/**
 * A fake Amazon Bedrock runtime over real HTTP, for Claude: `POST /model/{modelId}/invoke` and
 * `/invoke-with-response-stream`, each request's SigV4 signature checked (recomputed with the
 * AWS SDK's signer from the fake's own credentials over the exact bytes received: a wrong key,
 * region, service or body is a 403 InvalidSignatureException); bodies as Bedrock takes them
 * (`anthropic_version: bedrock-2023-05-31`, no `model`, no `stream`: 400 ValidationException);
 * answers in Anthropic's Messages shape, and streams in AWS event-stream framing whose `chunk`
 * events carry each Messages event as base64 JSON, ending with Bedrock's invocation metrics;
 * errors with `x-amzn-errortype` and `{"message"}`; an exception message inside a stream.
 * CountTokens: `POST /model/{modelId}/count-tokens` with `{"input": {"invokeModel": {"body":
 * "<base64 of an InvokeModel body>"}}}`, the decoded body checked as InvokeModel checks it;
 * `{"inputTokens": n}`. Like Bedrock, it counts for foundation-model ids only: an inference
 * profile's id (`us.anthropic.…`) or an ARN is a ValidationException.
 */

export interface FakeBedrockReply extends FakeReplyControls {
  text?: string;
  usage?: { input?: number; output?: number };
  /** Ends the stream after its content with this exception (`throttlingException`, `internalServerException`…). */
  streamException?: string;
  chunkSize?: number;
  /** What CountTokens answers (default: a quarter of the prompt's JSON length, rounded up). */
  countTokens?: number;
}

export interface FakeBedrockOptions {
  accessKeyId?: string;
  secretAccessKey?: string;
  region?: string;
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};
const PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|count-tokens)$/;

class Sha256 implements Checksum {
  private hash;
  constructor(private readonly secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', Buffer.from(secret as Uint8Array));
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    this.hash = this.secret === undefined ? createHash('sha256') : createHmac('sha256', Buffer.from(this.secret as Uint8Array));
  }
}

export async function startFakeBedrock(
  options: FakeBedrockOptions = {},
): Promise<FakeVendor<FakeBedrockReply> & { accessKeyId: string; secretAccessKey: string; region: string }> {
  const accessKeyId = options.accessKeyId ?? 'AKIAFAKEBEDROCK00001';
  const secretAccessKey = options.secretAccessKey ?? 'fake/secret/key/for/bedrock/0000000000000';
  const region = options.region ?? 'us-east-1';
  const signer = new SignatureV4({ credentials: { accessKeyId, secretAccessKey }, region, service: 'bedrock', sha256: Sha256 });

  const fake = await startFakeVendor<FakeBedrockReply>({ apiKey: null, basePath: '', defaultReply: {} }, async (exchange) => {
    const { request, response: res, reply } = exchange;
    const error = (status: number, message: string, type = ERROR_TYPES[status] ?? 'InternalServerException') => {
      if (res.destroyed) return;
      res.writeHead(status, {
        'content-type': 'application/json',
        'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
        ...(reply.retryAfter !== undefined ? { 'retry-after': reply.retryAfter } : {}),
      });
      res.end(JSON.stringify({ message }));
    };
    const match = PATH.exec(request.path);
    if (!match || request.method !== 'POST') return error(404, 'Not Found', 'UnknownOperationException');
    if (!(await signatureMatches(signer, request)))
      return error(
        403,
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
        'InvalidSignatureException',
      );
    if (reply.status && reply.status >= 400)
      return error(
        reply.status,
        reply.errorMessage ?? (reply.status === 429 ? 'Too many requests, please wait before trying again.' : 'The fake Bedrock failed.'),
      );
    const modelId = decodeURIComponent(match[1]!);
    let body: Record<string, any> = request.body ?? {};
    const counting = match[2] === 'count-tokens';
    if (counting) {
      const input = body.input as Record<string, any> | undefined;
      if (typeof input?.invokeModel?.body !== 'string' || Object.keys(input).length !== 1 || Object.keys(body).length !== 1)
        return error(400, "1 validation error detected: Value at 'input' failed to satisfy constraint: Member must not be null");
      if (!/^anthropic\./.test(modelId)) return error(400, "The provided model doesn't support counting tokens.");
      try {
        body = JSON.parse(Buffer.from(input.invokeModel.body, 'base64').toString('utf8')) as Record<string, any>;
      } catch {
        return error(400, 'Malformed input request: the body is not JSON, please reformat your input and try again.');
      }
    }
    if (body.anthropic_version !== 'bedrock-2023-05-31')
      return error(
        400,
        'Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.',
      );
    for (const key of ['model', 'stream'])
      if (key in body)
        return error(
          400,
          `Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`,
        );
    if (typeof body.max_tokens !== 'number' || !Array.isArray(body.messages))
      return error(400, 'Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again.');

    if (counting)
      return exchange.json(200, {
        inputTokens: reply.countTokens ?? Math.ceil(JSON.stringify([body.system, body.messages, body.tools]).length / 4),
      });
    const text = reply.text ?? 'Hello from fake Bedrock.';
    const usage = { input_tokens: reply.usage?.input ?? 20, output_tokens: reply.usage?.output ?? Math.max(1, Math.ceil(text.length / 4)) };
    const message = {
      id: 'msg_bdrk_fake',
      type: 'message',
      role: 'assistant',
      model: modelId.replace(/^(us\.|eu\.)?anthropic\./, ''),
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage,
    };
    if (match[2] === 'invoke') return exchange.json(200, message);

    const events: Record<string, unknown>[] = [
      { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ...pieces(text, reply.chunkSize ?? 5).map((piece) => ({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: piece },
      })),
      { type: 'content_block_stop', index: 0 },
    ];
    if (!reply.streamException) {
      events.push({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      });
      events.push({
        type: 'message_stop',
        'amazon-bedrock-invocationMetrics': {
          inputTokenCount: usage.input_tokens,
          outputTokenCount: usage.output_tokens,
          invocationLatency: 321,
          firstByteLatency: 123,
        },
      });
    }
    const codec = newEventStreamCodec();
    const frame = (headers: Record<string, string>, payload: unknown) =>
      Buffer.from(
        codec.encode({
          headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: 'string' as const, value }])),
          body: Buffer.from(JSON.stringify(payload)),
        }),
      );
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-content-type': 'application/json' });
    res.flushHeaders();
    for (let i = 0; i < events.length; i++) {
      if (reply.cutAfterChunks !== undefined && i >= reply.cutAfterChunks) {
        request.cutByServer = true;
        res.socket?.destroy();
        return;
      }
      if (i > 0 && reply.chunkDelayMs) await delay(reply.chunkDelayMs);
      if (res.destroyed) return;
      const bytes = Buffer.from(JSON.stringify(events[i])).toString('base64');
      // Bedrock pads each chunk (`p`) so that sizes do not reveal the text.
      const bytesFrame = frame(
        { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
        { bytes, p: 'abcdefghij'.slice(0, i % 10) },
      );
      // Split each frame in two writes: the decoder must join frames across chunks.
      const half = bytesFrame.length >> 1;
      await new Promise<void>((resolve) => res.write(bytesFrame.subarray(0, half), () => resolve()));
      await new Promise<void>((resolve) => res.write(bytesFrame.subarray(half), () => resolve()));
    }
    if (reply.streamException)
      res.write(
        frame(
          { ':exception-type': reply.streamException, ':content-type': 'application/json', ':message-type': 'exception' },
          { message: `The fake stream ended with ${reply.streamException}.` },
        ),
      );
    res.end();
  });
  return Object.assign(fake, { accessKeyId, secretAccessKey, region });
}

/** Recomputes the request's SigV4 signature over what was received and compares it with the one sent. */
async function signatureMatches(
  signer: SignatureV4,
  request: { path: string; headers: Record<string, string | string[] | undefined>; rawBody: string },
): Promise<boolean> {
  const authorization = String(request.headers.authorization ?? '');
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';');
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  const at = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!signedHeaders || !at) return false;
  const headers = Object.fromEntries(signedHeaders.map((name) => [name, String(request.headers[name] ?? '')]));
  const host = headers.host ?? '';
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: host.split(':')[0]!,
      port: Number(host.split(':')[1]),
      path: request.path,
      query: {},
      headers,
      body: request.rawBody,
    },
    { signingDate: new Date(Date.UTC(+at[1]!, +at[2]! - 1, +at[3]!, +at[4]!, +at[5]!, +at[6]!)) },
  );
  return signed.headers.authorization === authorization;
}
