import type { Dispatcher, Pool as UndiciPool } from 'undici';

/*
 * undici's Pool and its request(), required alone. The package's index also loads fetch,
 * WebSocket, EventSource, the HTTP caches and the mocks, which Tollgate never uses: about 12 MB
 * resident and 3 MB of heap more per instance (docs/performance.md). These are deep paths of
 * the version package.json pins; every provider test goes through them.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const Pool = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
export type Pool = UndiciPool;

// The index mixes this into every dispatcher's prototype; called on the pool instead.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const request = require('undici/lib/api/api-request.js') as (
  this: Dispatcher,
  options: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

/** `pool.request(options)`, as undici's index would provide it. */
export function poolRequest(pool: Pool, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return request.call(pool, options);
}

/** undici's parser of a response's raw header list (lower-cased names; repeated names as arrays). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const parseRawHeaders = (require('undici/lib/core/util.js') as { parseHeaders(raw: Buffer[]): Record<string, string | string[]> })
  .parseHeaders;

/** The error undici's request() gives a call whose signal fired. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const RequestAbortedError = (require('undici/lib/core/errors.js') as { RequestAbortedError: new () => Error }).RequestAbortedError;
