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

/** Tollgate's JSON logger: one line per event, errors under `err` as serializeError shows them; to stdout by default. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: undefined, serializers: SERIALIZERS }, destination ?? (level === 'silent' ? undefined : bufferedStdout()));
}

/** Most bytes of info lines kept before they are written. */
const BUFFER_BYTES = 4096;
/** Longest an info line waits to be written. */
const FLUSH_EVERY_MS = 100;
/** Lines of these levels (trace, debug, info) may wait; pino writes each line as `{"level":N,…`. */
const MAY_WAIT = /^\{"level":[123]0,/;

let stdout: pino.DestinationStream | null = null;

/**
 * Standard output for log lines, one per process. Info lines (the access log: one a request)
 * wait in a buffer of up to BUFFER_BYTES, written at least every FLUSH_EVERY_MS: a write system
 * call for many lines rather than one each (docs/performance.md). A warning or an error
 * is written at once, with whatever waited before it, and everything is at exit (a crash on an
 * uncaught error included); only a process killed outright loses the info lines of its last
 * FLUSH_EVERY_MS.
 */
function bufferedStdout(): pino.DestinationStream {
  if (stdout) return stdout;
  const out = pino.destination({ dest: 1, sync: true, minLength: BUFFER_BYTES });
  // Armed by the first line that waits, so an idle gateway is not woken to write nothing.
  let due: NodeJS.Timeout | null = null;
  const flush = () => {
    if (due === null) return;
    clearTimeout(due);
    due = null;
    out.flush();
  };
  process.on('exit', flush);
  stdout = {
    write: (line: string) => {
      out.write(line);
      if (due === null) due = setTimeout(flush, FLUSH_EVERY_MS).unref();
      if (!MAY_WAIT.test(line)) flush();
    },
  };
  return stdout;
}

/** The same error rule on a logger made elsewhere (a test's, an embedder's). */
export function withErrorSerializer(log: Logger): Logger {
  return log.child({}, { serializers: SERIALIZERS });
}
