import pino, { type Logger } from 'pino';

/**
 * What a log line shows of an error: its type, message and code, and its stack (where the
 * defect is). Never the error's other properties: a driver's error can carry its whole client
 * (a pg error holds the connection, with the backend's secret key), a row's values or a request.
 */
export function serializeError(error: unknown, depth = 0): Record<string, unknown> | string {
  if (typeof error === 'string') return error; // already a message
  if (!(error instanceof Error)) return { type: typeof error, message: 'a value that is not an Error was thrown' };
  const code = (error as { code?: unknown }).code;
  const cause = (error as { cause?: unknown }).cause;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(error.stack ? { stack: error.stack } : {}),
    ...(cause !== undefined && depth < 2 ? { cause: serializeError(cause, depth + 1) } : {}),
  };
}

const SERIALIZERS = { err: (error: unknown) => serializeError(error) };

/** Tollgate's JSON logger: one line per event, errors under `err` as serializeError shows them. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: undefined, serializers: SERIALIZERS }, destination);
}

/** The same error rule on a logger made elsewhere (a test's, an embedder's). */
export function withErrorSerializer(log: Logger): Logger {
  return log.child({}, { serializers: SERIALIZERS });
}
