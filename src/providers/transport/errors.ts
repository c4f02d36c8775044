import { ProviderError } from '../../domain/generation/errors';
import type { VendorErrorKind } from '../../domain/shared/telemetry';

/**
 * The one factory of vendor failures, for every modality: each becomes a ProviderError (502,
 * or the stream's error event) whose message names the vendor, carries the vendor's own words
 * when it sent some, and never a secret of the call (its API key). The `kind` says what failed,
 * and a 429 or 5xx keeps the vendor's `Retry-After`: what a failover to another deployment
 * needs to decide, before the first byte, whether and when to try again.
 */

/** What a failure names and what it must never echo. */
export interface VendorParty {
  /** Vendor name for messages (`openai`, `deepseek`…). */
  vendor: string;
  /** Strings never to be echoed in an error message (the API key). */
  secrets: readonly (string | null)[];
}

export interface TransportTimeouts {
  connectMs: number;
  headersMs: number;
  bodyIdleMs: number;
}

/** A non-2xx answer: the vendor's status and message (OpenAI, Anthropic and Gemini all put it at `error.message`). */
export function vendorStatusError(
  party: VendorParty,
  status: number,
  bodyText: string,
  headers?: Readonly<Record<string, string | string[] | undefined>>,
): ProviderError {
  const detail = vendorErrorMessage(bodyText);
  const message = `${party.vendor} answered HTTP ${status}${detail ? `: ${detail}` : '.'}`;
  const retryAfter = headers && (status === 429 || status >= 500) ? retryAfterMs(headers) : null;
  return new ProviderError(redact(message, party.secrets), party.vendor, status, undefined, undefined, retryAfter);
}

/** A 2xx answer that is not what the protocol says (not JSON, no image, a field of the wrong type). */
export function invalidAnswerError(party: VendorParty, message: string, status: number | null = null): ProviderError {
  return new ProviderError(redact(message, party.secrets), party.vendor, status, undefined, 'invalid_answer');
}

export function cancelledError(vendor: string): ProviderError {
  return new ProviderError(`The request to ${vendor} was cancelled by the client.`, vendor, null, 'client_cancelled');
}

/**
 * A failure below HTTP: no connection, a timeout (connect, first byte, silence mid-answer) or a
 * connection that broke. `phase` says whether anything of the answer had arrived.
 */
export function transportError(
  party: VendorParty,
  error: unknown,
  phase: 'connect' | 'stream',
  timeouts: TransportTimeouts,
  cancelled: boolean,
): ProviderError {
  if (error instanceof ProviderError) return error;
  if (cancelled) return cancelledError(party.vendor);
  const code = errorCode(error);
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  let message: string;
  let kind: VendorErrorKind = 'timeout';
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      message = `Could not connect to ${party.vendor} within ${seconds(timeouts.connectMs)}.`;
      break;
    case 'UND_ERR_HEADERS_TIMEOUT':
      message = `${party.vendor} did not answer within ${seconds(timeouts.headersMs)}.`;
      break;
    case 'UND_ERR_BODY_TIMEOUT':
      message = `${party.vendor} sent nothing for ${seconds(timeouts.bodyIdleMs)} in the middle of its answer.`;
      break;
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      message = `Could not connect to ${party.vendor} (${code}).`;
      kind = 'connect';
      break;
    default:
      kind = phase === 'connect' ? 'connect' : 'broken_stream';
      message =
        phase === 'connect'
          ? `The request to ${party.vendor} failed (${code ?? 'network error'}).`
          : `The connection to ${party.vendor} broke in the middle of its answer (${code ?? 'network error'}).`;
  }
  return new ProviderError(redact(message, party.secrets), party.vendor, null, undefined, kind);
}

/** A transport that cannot be used (closed at shutdown, or a base URL that is not one): nothing was sent. */
export function unusableTargetError(vendor: string, message: string): ProviderError {
  return new ProviderError(message, vendor, null, undefined, 'connect');
}

function errorCode(error: unknown): string | null {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return null;
}

/** The human message inside a vendor error body, if it has one. */
export function vendorErrorMessage(bodyText: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    const text = bodyText.trim();
    return text ? truncate(text, 300) : null;
  }
  // Gemini sometimes wraps the error object in an array.
  const root = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!isRecord(root)) return null;
  const error = root.error;
  if (isRecord(error) && typeof error.message === 'string') return truncate(error.message, 1000);
  if (typeof error === 'string') return truncate(error, 1000);
  if (typeof root.message === 'string') return truncate(root.message, 1000);
  return null;
}

/** Longest wait a vendor's Retry-After is taken at (a larger one is a vendor's mistake or an outage). */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;

/**
 * The vendor's wait before another attempt, in ms: `retry-after-ms` (OpenAI, Azure) before the
 * standard `retry-after` (seconds, or an HTTP date). Null when absent or unreadable.
 */
export function retryAfterMs(headers: Readonly<Record<string, string | string[] | undefined>>, now = Date.now()): number | null {
  const first = (name: string) => {
    const value = headers[name];
    return (Array.isArray(value) ? value[0] : value)?.trim() || null;
  };
  const ms = first('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms)) return Math.min(Math.ceil(Number(ms)), MAX_RETRY_AFTER_MS);
  const value = first('retry-after');
  if (value === null) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.min(Math.ceil(Number(value) * 1000), MAX_RETRY_AFTER_MS);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

export function redact(message: string, secrets: readonly (string | null)[]): string {
  let out = message;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
