import { hash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random base62 string with ~6 bits of entropy per character. */
export function randomToken(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length; i++) {
    const b = bytes[i % bytes.length];
    if (b < 248) out += BASE62[b % 62]; // 248 = 4 × 62: keeps the distribution uniform
  }
  return out;
}

/**
 * API keys and session tokens carry 190+ bits of entropy, so a plain SHA-256 is a safe
 * lookup hash for them (no salt or slow hash needed, unlike passwords).
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex'); // one-shot: a third of createHash's cost, once per request
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const SCRYPT_KEYLEN = 32;

/** `scrypt$<salt hex>$<hash hex>`: slow, salted password hash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, SCRYPT_KEYLEN);
  return `scrypt$${salt.toString('hex')}$${hash.toString('hex')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, saltHex, hashHex] = stored.split('$');
  if (scheme !== 'scrypt' || !saltHex || !hashHex) return false;
  const hash = await scrypt(password, Buffer.from(saltHex, 'hex'), SCRYPT_KEYLEN);
  return timingSafeEqual(hash, Buffer.from(hashHex, 'hex'));
}
