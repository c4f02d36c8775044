import { badRequest } from './errors';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/**
 * The one page-size rule of every list (keys' events, videos, usage records): 1 to 100, 20 when
 * absent (or the list's own `fallback`). Takes what the plane got: a number (GraphQL `first`) or a
 * query string (REST `limit`).
 */
export function pageSize(requested: unknown, fallback = DEFAULT_PAGE_SIZE): number {
  if (requested === undefined || requested === null) return fallback;
  const n = typeof requested === 'string' ? (/^\d{1,4}$/.test(requested) ? Number(requested) : NaN) : requested;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) {
    throw badRequest(`Page size must be a whole number from 1 to ${MAX_PAGE_SIZE}`, { field: 'page.limit' });
  }
  return n;
}

/** A page cursor as the plane got it: a string or absent (a repeated query parameter is refused). */
export function pageCursor(after: unknown): string | null {
  if (after === undefined || after === null) return null;
  if (typeof after !== 'string') throw badRequest('The page cursor must be a single id', { field: 'page.after' });
  return after;
}
