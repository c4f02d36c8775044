import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthService } from '../domain/accounts/auth';
import { Cancellation } from '../domain/generation/cancellation';
import type { TokenCounter } from '../domain/generation/count-tokens';
import { namedFor } from '../domain/generation/field-keys';
import type { AdmissionService } from '../domain/limits/admission';
import { countTokensAnswer, decodeCountTokensRequest } from '../protocols/anthropic-messages/count-tokens';
import type { MessagesRequestHeaders } from '../protocols/anthropic-messages/decode-vendor-only';
import { admitRequest } from './admission';
import { authenticateApiKey } from './auth';
import { accessLogRecord, bodyObject, readJsonBody, sendJson, setAnswerHeader } from './http';

/** Anthropic's count_tokens path (the Messages API's own; `?beta=true` and the like are ignored). */
export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

export interface CountTokensDeps {
  auth: AuthService;
  admission: AdmissionService;
  counter: TokenCounter;
  maxJsonBodyBytes: number;
}

/** The headers a Messages client sends for Anthropic (forwarded to it). */
export function messagesHeaders(req: IncomingMessage): MessagesRequestHeaders {
  const beta = req.headers['anthropic-beta'];
  const version = req.headers['anthropic-version'];
  return { ...(typeof beta === 'string' ? { beta } : {}), ...(typeof version === 'string' ? { version } : {}) };
}

/**
 * POST /v1/messages/count_tokens: authenticated like /v1/messages (`x-api-key` too) and admitted
 * like any request (rate-limit windows and headers, a concurrency slot), then counted: free,
 * nothing reserved or charged. Errors are the Messages endpoints' (Anthropic's shape).
 */
export async function serveCountTokens(deps: CountTokensDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const principal = await authenticateApiKey(deps.auth, req, res, { allowXApiKey: true });
  const ticket = await admitRequest(deps.admission, principal, res);
  if (!ticket) return;
  const { decoded, names } = decodeCountTokensRequest(bodyObject(await readJsonBody(req, deps.maxJsonBodyBytes)), messagesHeaders(req));
  const cancellation = new Cancellation();
  res.once('close', () => {
    if (!res.writableFinished) cancellation.cancel();
  });
  // The canonical rules refuse by domain key; the answer names the field as Messages does.
  const count = await deps.counter.count(principal, decoded, cancellation).catch((error: unknown) => {
    throw namedFor(error, names);
  });
  accessLogRecord(res).model = count.model.id;
  if (count.routedFrom !== null) setAnswerHeader(res, 'x-service-model-routed-from', count.routedFrom);
  sendJson(res, 200, countTokensAnswer(count.inputTokens));
}
