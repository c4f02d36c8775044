import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthService } from '../domain/accounts/auth';
import { Cancellation } from '../domain/generation/cancellation';
import { namedFor, type TextFieldNames } from '../domain/generation/field-keys';
import type { DecodedTextRequest, TextGeneration, TextGenerationContext, TextGenerationService } from '../domain/generation/service';
import type { KeyPrincipal } from '../domain/shared/principal';
import type { AdmissionService } from '../domain/limits/admission';
import { ApiError, internalError } from '../domain/shared/errors';
import { unixSeconds } from '../domain/shared/clock';
import { decodeMessagesIngress } from '../protocols/anthropic-messages/decode-request';
import { encodeMessagesResponse, messagesErrorBody } from '../protocols/anthropic-messages/encode-answer';
import { MessagesStreamEncoder } from '../protocols/anthropic-messages/stream-encoder';
import { collectEvents, type AnswerMeta, type CollectedResult } from '../protocols/collect';
import { decodeChatIngress } from '../protocols/openai-chat/decode-request';
import { encodeChatResponse } from '../protocols/openai-chat/encode-answer';
import { ChatStreamEncoder } from '../protocols/openai-chat/stream-encoder';
import { decodeResponsesIngress } from '../protocols/openai-responses/decode-request';
import { encodeResponsesResponse } from '../protocols/openai-responses/encode-answer';
import { ResponsesStreamEncoder } from '../protocols/openai-responses/stream-encoder';
import { SSE_HEADERS } from '../protocols/sse-write';
import type { StreamEncoder } from '../protocols/streams';
import { authenticateApiKey } from './auth';
import {
  accessLogRecord,
  answerError,
  beginRequest,
  bodyObject,
  noteError,
  readJsonBody,
  sendJson,
  setAnswerHeader,
  setHeaders,
  writeHeadWith,
  type ErrorBody,
  type RequestObservers,
} from './http';
import { COUNT_TOKENS_PATH, messagesHeaders, serveCountTokens } from './count-tokens';
import type { TokenCounter } from '../domain/generation/count-tokens';
import { withFields } from '../domain/shared/objects';

/**
 * POST /v1/chat/completions, /v1/responses and /v1/messages: the text endpoints, served on
 * node:http directly rather than through Express. They are the request path the latency bar
 * is about, and Express 5's router, its request/response prototypes and body-parser cost more
 * than the whole rest of a request here (docs/text.md, "Why the text endpoints bypass Express").
 * Everything else they need (request id and access log, JSON body, API key, admission, error
 * envelope) is the same code the Express routes use (http.ts, auth.ts, admission.ts).
 */

/** One client wire format: how its body decodes and how answers and streams encode. */
interface TextFormat<Extra> {
  /** Its route (`POST` only), also its endpoint label in metrics and traces. */
  path: string;
  /** The Anthropic SDK sends its key as `x-api-key`. */
  allowXApiKey: boolean;
  /** `names`: how the request names the fields the canonical rules refuse by domain key. */
  decode(body: unknown, req: IncomingMessage): { decoded: DecodedTextRequest; names: TextFieldNames; extra: Extra };
  encodeResponse(result: CollectedResult, meta: AnswerMeta, extra: Extra): unknown;
  streamEncoder(meta: AnswerMeta, extra: Extra, generation: TextGeneration, requestId: string): StreamEncoder;
  /** The format's own error body (default: the envelope). */
  errorBody?(error: ApiError, requestId: string): unknown;
}

const chatFormat: TextFormat<{ includeUsage: boolean }> = {
  path: '/v1/chat/completions',
  allowXApiKey: false,
  decode: (body) => {
    const { decoded, names, includeUsage } = decodeChatIngress(body);
    return { decoded, names, extra: { includeUsage } };
  },
  encodeResponse: (result, meta) => encodeChatResponse(result, meta),
  streamEncoder: (meta, extra) => new ChatStreamEncoder(withFields(meta, { includeUsage: extra.includeUsage })),
};

const responsesFormat: TextFormat<ReturnType<typeof decodeResponsesIngress>['echo']> = {
  path: '/v1/responses',
  allowXApiKey: false,
  decode: (body) => {
    const { decoded, names, echo } = decodeResponsesIngress(body);
    return { decoded, names, extra: echo };
  },
  encodeResponse: (result, meta, echo) => encodeResponsesResponse(result, withFields(meta, { echo })),
  streamEncoder: (meta, echo) => new ResponsesStreamEncoder(withFields(meta, { echo })),
};

/** Messages: Anthropic's request headers go with the body, its errors answer in Anthropic's shape, its stream starts with the prompt's usage. */
const messagesFormat: TextFormat<{ omitThinking: boolean }> = {
  path: '/v1/messages',
  allowXApiKey: true,
  decode: (body, req) => {
    const { decoded, names, omitThinking } = decodeMessagesIngress(body, messagesHeaders(req));
    return { decoded, names, extra: { omitThinking } };
  },
  encodeResponse: (result, meta, extra) => encodeMessagesResponse(result, meta, extra.omitThinking),
  streamEncoder: (meta, extra, generation, requestId) =>
    new MessagesStreamEncoder(withFields(meta, { inputUsage: generation.inputUsage(), omitThinking: extra.omitThinking, requestId })),
  errorBody: (error, requestId) => messagesErrorBody(error, requestId),
};

const FORMATS = new Map<string, TextFormat<unknown>>(
  [chatFormat, responsesFormat, messagesFormat].map((format) => [format.path, format as TextFormat<unknown>]),
);

/** The paths these endpoints serve (POST), for the API document's completeness check. */
export const TEXT_ENDPOINT_PATHS: readonly string[] = [...FORMATS.keys(), COUNT_TOKENS_PATH];

/** The path of a POST, matched as Express did (case-insensitive, one trailing slash allowed, query ignored). */
function postPathOf(req: IncomingMessage): string | undefined {
  if (req.method !== 'POST') return undefined;
  const url = req.url ?? '';
  const query = url.indexOf('?');
  let path = (query === -1 ? url : url.slice(0, query)).toLowerCase();
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return path;
}

/**
 * Writes a chunk; when the client reads slower than the vendor writes, answers a promise of the
 * drain to wait for, else null (no promise and no await per event on the usual path).
 */
function writeChunk(res: ServerResponse, chunk: string): Promise<void> | null {
  if (chunk === '' || res.writableEnded || res.destroyed || res.write(chunk)) return null;
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Events the vendor sent in one packet are decoded in one turn of the event loop; corked until
 * that turn ends, they leave in one write (one system call) instead of one each. An event that
 * arrives alone still leaves at once: the cork only lasts until the current turn ends.
 */
function coalescedWrites(res: ServerResponse): () => void {
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  return () => {
    if (corked) return;
    corked = true;
    res.cork();
    process.nextTick(uncork);
  };
}

export interface TextEndpointDeps {
  auth: AuthService;
  admission: AdmissionService;
  pipeline: TextGenerationService;
  /** Messages count_tokens. */
  tokenCounter: TokenCounter;
  observers: RequestObservers;
  maxJsonBodyBytes: number;
}

interface Started<Extra> {
  generation: TextGeneration;
  decoded: DecodedTextRequest;
  extra: Extra;
}

/** Body → decode → pipeline.start (which admits the request with its token estimate). */
async function decodeAndStart<Extra>(
  format: TextFormat<Extra>,
  deps: TextEndpointDeps,
  req: IncomingMessage,
  principal: KeyPrincipal,
  context: TextGenerationContext,
): Promise<Started<Extra>> {
  const body = await readJsonBody(req, deps.maxJsonBodyBytes);
  const { decoded, names, extra } = format.decode(bodyObject(body), req);
  try {
    return { generation: await deps.pipeline.start(principal, decoded, context), decoded, extra };
  } catch (error) {
    // The canonical rules refuse by domain key; the answer names the field as the client sent it.
    throw namedFor(error, names);
  }
}

/**
 * Serves one text request in any format: API key → body → decode → pipeline (resolve, clamp,
 * admit with the token estimate, reserve, provider) → encode. Everything before the first byte
 * is an ordinary error envelope; a failure once a stream has begun is the format's stream
 * error event.
 */
/**
 * The conversation a client names for prompt-cache affinity (docs/routing.md): `x-session-id`,
 * or the one Claude Code sends; bounded so that a key in memory stays small.
 */
function routeHints(req: IncomingMessage): { session: string } | undefined {
  const sent = req.headers['x-session-id'] ?? req.headers['x-claude-code-session-id'];
  return typeof sent === 'string' && sent.length > 0 && sent.length <= 200 ? { session: sent } : undefined;
}

async function serveText<Extra>(
  format: TextFormat<Extra>,
  deps: TextEndpointDeps,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
): Promise<void> {
  // The key first: an unauthenticated client must not make the gateway read, inflate or parse its body.
  const principal = await authenticateApiKey(deps.auth, req, res, { allowXApiKey: format.allowXApiKey });
  // Admission happens in the pipeline, with the token estimate (one store operation); a subject
  // known to be over its request windows is refused here, before its body is read.
  const ticket = await deps.admission.deferred(principal);
  const cancellation = new Cancellation();
  // 'close' comes once: `on` spares the wrapper `once` makes and removes per request.
  res.on('close', () => {
    if (!res.writableFinished) cancellation.cancel();
    // A slot that cannot be freed (store down) expires by its TTL; never an unhandled rejection.
    ticket.release().catch(() => undefined);
  });
  // The client may have gone during authentication: 'close' has then already been emitted,
  // and nobody is left to receive (or pay for) the answer.
  if (res.destroyed) return;
  const record = accessLogRecord(res);
  let started: Started<Extra>;
  try {
    started = await decodeAndStart(format, deps, req, principal, {
      signal: cancellation,
      requestId,
      tokens: ticket,
      onCharged: (costMicro) => (record.costMicro = costMicro),
      outcome: record,
      span: record.span,
      route: routeHints(req),
    });
  } catch (error) {
    // Answered without being served: still counted, and its answer carries the headers (a full request window makes it that 429).
    const headers = await ticket.recordUnserved();
    if (headers) setHeaders(res, headers);
    throw error;
  }
  const { generation, decoded, extra } = started;
  // The token window now holds this request's reservation: headers before the first byte.
  setHeaders(res, ticket.headers());
  if (generation.routedFrom !== null) setAnswerHeader(res, 'x-service-model-routed-from', generation.routedFrom);
  if (generation.clampedTo !== null) setAnswerHeader(res, 'x-service-max-output-clamped', String(generation.clampedTo));
  if (generation.droppedHints.length > 0) setAnswerHeader(res, 'x-service-dropped-hints', generation.droppedHints.join(', '));
  const meta: AnswerMeta = {
    model: generation.model.id,
    created: unixSeconds(new Date()),
    // Always the key (undefined when not clamped): one shape, no conditional spread.
    clampedOutputLimit: generation.clampedTo ?? undefined,
  };

  if (!decoded.stream) {
    const result = collectEvents(await generation.allEvents());
    sendJson(res, 200, format.encodeResponse(result, meta, extra));
    return;
  }
  writeHeadWith(res, 200, SSE_HEADERS);
  const encoder = format.streamEncoder(meta, extra, generation, requestId);
  const coalesce = coalescedWrites(res);
  // The headers leave with the first event's bytes, in one write (the first event is already in
  // hand: start() waited for it); only an event that encodes to nothing sends them alone.
  let headersOut = false;
  try {
    // The events that arrived together leave in one write (a batch counts as delivered whole).
    for await (const batch of generation.batches()) {
      if (cancellation.aborted) break;
      coalesce();
      let chunk = encoder.encode(batch[0]!);
      for (let i = 1; i < batch.length; i++) chunk += encoder.encode(batch[i]!);
      if (!headersOut) {
        headersOut = true;
        if (chunk === '') res.flushHeaders();
      }
      const drained = writeChunk(res, chunk);
      if (drained) await drained;
    }
  } catch (error) {
    const failure = error instanceof ApiError ? error : internalError();
    noteError(res, failure);
    const drained = writeChunk(res, encoder.encodeError(failure));
    if (drained) await drained;
    if (!(error instanceof ApiError)) deps.observers.log.error({ err: error, request_id: requestId }, 'stream failed on a defect');
  }
  // Node 22 drops what is still corked when end() is called: the last events leave first.
  while (res.writableCorked > 0) res.uncork();
  res.end();
}

/**
 * The text endpoints as a node:http request listener that takes only its own requests:
 * returns false for any other, which then goes to Express. `track` counts the request in
 * flight (drain on shutdown).
 */
export function textEndpoints(
  deps: TextEndpointDeps,
  track: (res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  // count_tokens answers errors as /v1/messages does.
  const messagesError =
    (requestId: string): ErrorBody =>
    (error) =>
      messagesErrorBody(error, requestId);
  const counting = { auth: deps.auth, admission: deps.admission, counter: deps.tokenCounter, maxJsonBodyBytes: deps.maxJsonBodyBytes };
  return (req, res) => {
    const path = postPathOf(req);
    if (path === COUNT_TOKENS_PATH) {
      track(res);
      const { requestId } = beginRequest(req, res, deps.observers, req.url!.split('?')[0]!, COUNT_TOKENS_PATH, true);
      serveCountTokens(counting, req, res).catch((error: unknown) => answerError(res, error, deps.observers.log, messagesError(requestId)));
      return true;
    }
    const format = path === undefined ? undefined : FORMATS.get(path);
    if (!format) return false;
    track(res);
    const { requestId } = beginRequest(req, res, deps.observers, req.url!.split('?')[0]!, format.path, true);
    const errorBody = format.errorBody ? (error: ApiError) => format.errorBody!(error, requestId) : undefined;
    serveText(format, deps, req, res, requestId).catch((error: unknown) => answerError(res, error, deps.observers.log, errorBody));
    return true;
  };
}
