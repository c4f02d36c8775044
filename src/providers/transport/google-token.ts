import { createSign } from 'node:crypto';
import type { ServiceAccountKey } from '../../domain/catalog/vendors';
import { ProviderError } from '../../domain/generation/errors';
import type { VendorTransport } from './client';
import { invalidAnswerError } from './errors';

/** What a Vertex AI token may do: Google Cloud's APIs, Vertex AI among them. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** The longest assertion Google accepts, and the life of the token it mints. */
const ASSERTION_LIFETIME_S = 3600;
/** A token is replaced this long before it expires, so none expires while a request is on its way. */
const REFRESH_MARGIN_MS = 5 * 60_000;

const base64url = (text: string | Buffer): string => Buffer.from(text).toString('base64url');

/**
 * OAuth access tokens of a Google service account (the JWT bearer grant): an assertion signed
 * with the key's private key (RS256) is exchanged at the key's `token_uri` for a token that
 * lives about an hour. The token is kept until 5 minutes before it expires, and one refresh at
 * a time is in flight, whatever the number of requests waiting for it. A refusal of the key
 * (any 4xx of the token endpoint) is the deployment's own setup: a 401, as a vendor refusing
 * an API key; its 429 or 5xx and transport failures keep their kind.
 */
export class ServiceAccountTokens {
  private token: { value: string; refreshAt: number } | null = null;
  private pending: Promise<string> | null = null;

  constructor(
    private readonly vendor: string,
    private readonly key: ServiceAccountKey,
    private readonly http: VendorTransport,
    private readonly now: () => number = Date.now,
  ) {}

  /** A valid access token: the kept one, else the one being minted (shared by every caller). */
  get(): Promise<string> {
    if (this.token !== null && this.now() < this.token.refreshAt) return Promise.resolve(this.token.value);
    this.pending ??= this.mint().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /** Forgets a token the vendor refused (401: revoked, or the clock was wrong), so the next request mints another. */
  forget(token: string): void {
    if (this.token?.value === token) this.token = null;
  }

  private async mint(): Promise<string> {
    const issuedAt = this.now();
    const assertion = this.assertion(Math.floor(issuedAt / 1000));
    const url = new URL(this.key.tokenUri);
    const party = { vendor: this.vendor, secrets: [assertion, this.key.privateKey] };
    let answer: unknown;
    try {
      answer = await this.http.postJson({
        ...party,
        baseUrl: url.origin,
        path: url.pathname + url.search,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: null,
        bodyText: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      });
    } catch (error) {
      if (error instanceof ProviderError && error.kind === 'http_4xx')
        throw new ProviderError(
          `${this.vendor} could not get an access token for its service account (${error.message})`,
          this.vendor,
          401,
        );
      throw error;
    }
    const { access_token: value, expires_in: expiresIn } = (answer ?? {}) as { access_token?: unknown; expires_in?: unknown };
    if (typeof value !== 'string' || value === '' || typeof expiresIn !== 'number')
      throw invalidAnswerError(party, `${this.vendor}'s token endpoint answered without access_token and expires_in.`);
    this.token = { value, refreshAt: issuedAt + expiresIn * 1000 - REFRESH_MARGIN_MS };
    return value;
  }

  /** The signed JWT that asks for a token: who (the service account), for what (scope), to whom (the token URI), until when. */
  private assertion(nowSeconds: number): string {
    const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
    const claims = base64url(
      JSON.stringify({
        iss: this.key.clientEmail,
        scope: CLOUD_PLATFORM_SCOPE,
        aud: this.key.tokenUri,
        iat: nowSeconds,
        exp: nowSeconds + ASSERTION_LIFETIME_S,
      }),
    );
    const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(this.key.privateKey);
    return `${header}.${claims}.${base64url(signature)}`;
  }
}
