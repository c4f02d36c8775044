import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServiceAccountKey } from '../domain/catalog/vendors';
import { ConfigError } from './env';

/** Google's token endpoint, for a key file that names none. */
const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

/**
 * A Vertex AI vendor's service account key, from its credential variable: the key file's JSON
 * itself (a value starting with `{`, as secret stores hand it over), else the path of the file
 * (read once, at start). Checked whole here so that a wrong key stops the start with a message
 * naming the variable, never quoting the key.
 */
export function serviceAccountKey(env: Record<string, string | undefined>, name: string): ServiceAccountKey | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  let text = raw;
  if (!raw.startsWith('{')) {
    try {
      text = readFileSync(raw, 'utf8');
    } catch (error) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'unreadable';
      throw new ConfigError(`${name} must be a service account key (its JSON, or the path of its file): cannot read '${raw}' (${code})`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`${name} must be a service account key: its content is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError(`${name} must be a service account key: a JSON object`);
  const key = parsed as Record<string, unknown>;
  if (key.type !== 'service_account') throw new ConfigError(`${name} must be a service account key ("type": "service_account")`);
  const field = (field: string): string | null => (typeof key[field] === 'string' && key[field] !== '' ? key[field] : null);
  const clientEmail = field('client_email');
  const privateKey = field('private_key');
  if (clientEmail === null || privateKey === null)
    throw new ConfigError(`${name} must be a service account key with client_email and private_key`);
  try {
    if (createPrivateKey(privateKey).asymmetricKeyType !== 'rsa') throw new Error('not RSA');
  } catch {
    throw new ConfigError(`${name}: its private_key is not an RSA private key in PEM`);
  }
  const tokenUri = field('token_uri') ?? GOOGLE_TOKEN_URI;
  if (!/^https?:\/\/[^\s]+$/.test(tokenUri) || !URL.canParse(tokenUri))
    throw new ConfigError(`${name}: its token_uri must be an http(s) URL`);
  return { clientEmail, privateKey, tokenUri, projectId: field('project_id') };
}
