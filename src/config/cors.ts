import { ConfigError, optional } from './env';

/** `*` (any origin) or the allowed origins (`https://chat.example.com`); empty: same-origin only. */
export type CorsOrigins = '*' | readonly string[];

/** `*`, `none`, or comma-separated origins (scheme, host and port only), normalised as browsers send them. */
export function corsOrigins(env: Record<string, string | undefined>, name: string, fallback: CorsOrigins): CorsOrigins {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (raw === '*') return '*';
  if (raw.toLowerCase() === 'none') return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      let url: URL | null = null;
      try {
        url = new URL(entry);
      } catch {
        // reported below
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== entry.replace(/\/$/, '').toLowerCase()) {
        throw new ConfigError(
          `${name} must be '*', 'none' or comma-separated origins such as https://chat.example.com (no path), got '${entry}'`,
        );
      }
      return url.origin;
    });
}
