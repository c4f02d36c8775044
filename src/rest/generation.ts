import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { AuthService } from '../domain/accounts/auth';
import type { DecodedTextRequest, TextGenerationService, TokenWindow } from '../domain/generation/service';
import { ApiError } from '../domain/shared/errors';
import { unixSeconds } from '../domain/shared/clock';
import { finalizeMessagesRequest, decodeMessagesRequest, encodeMessagesResponse, MessagesStreamEncoder } from '../protocols/anthropic-messages/ingress';
import { collectStream, type AnswerMeta, type CollectedResult } from '../protocols/collect';
import { ChatStreamEncoder, decodeChatIngress, encodeChatResponse } from '../protocols/openai-chat/ingress';
import { decodeResponsesIngress, encodeResponsesResponse, ResponsesStreamEncoder } from '../protocols/openai-responses/ingress';
import { SSE_HEADERS } from '../protocols/sse-write';
import { admissionTicket, setRateLimitHeaders } from './admission';
import { keyPrincipal, requireApiKey } from './auth';
import { bodyObject, facts } from './http';

/** One client wire format: how its body decodes and how answers and streams encode. */
interface TextFormat<Extra> {
  decode(body: unknown): { decoded: DecodedTextRequest; extra: Extra };
  encodeResponse(result: CollectedResult, meta: AnswerMeta, extra: Extra): unknown;
  streamEncoder(meta: AnswerMeta, extra: Extra): { encode(event: Parameters<ChatStreamEncoder['encode']>[0]): string; encodeError(error: ApiError): string };
}

const chatFormat: TextFormat<{ includeUsage: boolean }> = {
  decode: (body) => {
    const { decoded, includeUsage } = decodeChatIngress(body);
    return { decoded, extra: { includeUsage } };
  },
  encodeResponse: (result, meta) => encodeChatResponse(result, meta),
  streamEncoder: (meta, extra) => new ChatStreamEncoder({ ...meta, includeUsage: extra.includeUsage }),
};

const responsesFormat: TextFormat<ReturnType<typeof decodeResponsesIngress>['echo']> = {
  decode: (body) => {
    const { decoded, echo } = decodeResponsesIngress(body);
    return { decoded, extra: echo };
  },
  encodeResponse: (result, meta, echo) => encodeResponsesResponse(result, { ...meta, echo }),
  streamEncoder: (meta, echo) => new ResponsesStreamEncoder({ ...meta, echo }),
};

const messagesFormat: TextFormat<null> = {
  decode: (body) => ({ decoded: { ...decodeMessagesRequest(body), finalize: finalizeMessagesRequest }, extra: null }),
  encodeResponse: (result, meta) => encodeMessagesResponse(result, meta),
  streamEncoder: (meta) => new MessagesStreamEncoder(meta),
};

/** Writes a chunk and waits when the client reads slower than the vendor writes. */
async function writeChunk(res: Response, chunk: string): Promise<void> {
  if (chunk === '' || res.writableEnded || res.destroyed) return;
  if (!res.write(chunk)) await new Promise<void>((resolve) => {
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
 * Serves one text request in any format: decode → pipeline (resolve, clamp, admit tokens,
 * reserve, provider) → encode. Everything before the first byte is an ordinary error envelope;
 * a failure once a stream has begun is the format's stream error event.
 */
function serveText<Extra>(format: TextFormat<Extra>, pipeline: TextGenerationService): RequestHandler {
  return async (req: Request, res: Response) => {
    const { decoded, extra } = format.decode(bodyObject(req));
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    // The client may have gone while authentication and admission ran: 'close' has then
    // already been emitted, and nobody is left to receive (or pay for) the answer.
    if (res.destroyed) abort.abort();
    const generation = await pipeline.start(keyPrincipal(res), decoded, {
      signal: abort.signal,
      requestId: facts(res).requestId,
      tokens: res.locals.admission as TokenWindow | undefined,
      onCharged: (costMicro) => (facts(res).costMicro = costMicro),
    });
    facts(res).model = generation.model.id;
    // The token window now holds this request's reservation: headers before the first byte.
    if (res.locals.admission) setRateLimitHeaders(res, admissionTicket(res).headers());
    if (generation.routedFrom !== null) res.setHeader('x-service-model-routed-from', generation.routedFrom);
    if (generation.clampedTo !== null) res.setHeader('x-service-max-output-clamped', String(generation.clampedTo));
    const meta: AnswerMeta = { model: generation.model.id, created: unixSeconds(new Date()) };

    if (!decoded.stream) {
      const result = await collectStream(generation.events);
      res.json(format.encodeResponse(result, meta, extra));
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    const encoder = format.streamEncoder(meta, extra);
    try {
      for await (const event of generation.events) {
        if (abort.signal.aborted) break;
        await writeChunk(res, encoder.encode(event));
      }
    } catch (error) {
      const failure = error instanceof ApiError ? error : new ApiError(500, 'internal_error', 'Internal error.');
      await writeChunk(res, encoder.encodeError(failure));
      if (!(error instanceof ApiError)) res.locals.streamDefect = error;
    }
    res.end();
  };
}

/** POST /chat/completions, /responses and /messages (the Anthropic SDK sends `x-api-key`). */
export function generationRouter(auth: AuthService, pipeline: TextGenerationService, admitRequest: RequestHandler): Router {
  const router = Router();
  const apiKey = requireApiKey(auth, { allowXApiKey: false });
  router.post('/chat/completions', apiKey, admitRequest, serveText(chatFormat, pipeline));
  router.post('/responses', apiKey, admitRequest, serveText(responsesFormat, pipeline));
  router.post('/messages', requireApiKey(auth, { allowXApiKey: true }), admitRequest, serveText(messagesFormat, pipeline));
  return router;
}
