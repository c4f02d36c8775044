/** Readers of environment variables: each validates its value and names the variable when it is wrong. */
export class ConfigError extends Error {}

export function integer(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return value;
}

export function boolean(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got '${env[name]}'`);
}

export function optional(env: Record<string, string | undefined>, name: string): string | null {
  const raw = env[name]?.trim();
  return raw ? raw : null;
}

export function httpUrl(env: Record<string, string | undefined>, name: string): string | null {
  const raw = optional(env, name);
  if (raw === null) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http:// or https:// URL, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${name} must be an http:// or https:// URL, got '${raw}'`);
  return raw;
}

/** A base URL must be absolute http(s) with no query or fragment, since paths are appended to it. */
export function baseUrl(env: Record<string, string | undefined>, name: string): string | null {
  const raw = httpUrl(env, name);
  if (raw === null) return null;
  const url = new URL(raw);
  if (url.search || url.hash || url.username || url.password)
    throw new ConfigError(`${name} must have no query, fragment or credentials, got '${raw}'`);
  return raw.replace(/\/+$/, '');
}
