import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, SourceData } from '@smithy/types';

/**
 * AWS Signature Version 4 for a vendor call (Amazon Bedrock), by the AWS SDK's own signer
 * (`@smithy/signature-v4`) over Node's crypto: the headers to send with a JSON POST whose
 * exact body text was signed.
 */

/** SHA-256 (or its HMAC, given a secret) in the shape the signer takes. */
class NodeSha256 implements Checksum {
  private hash: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }

  update(data: Uint8Array): void {
    this.hash.update(data);
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }

  reset(): void {
    this.hash = this.fresh();
  }

  private fresh(): Hash | Hmac {
    if (this.secret === undefined) return createHash('sha256');
    const key = typeof this.secret === 'string' ? this.secret : Buffer.from(this.secret as Uint8Array);
    return createHmac('sha256', key);
  }
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export class AwsSigner {
  private readonly signer: SignatureV4;

  constructor(credentials: AwsCredentials, region: string, service: string) {
    // Required by the first signer (a Bedrock deployment), not at startup: an instance without
    // one never loads the AWS SDK's signing code (docs/performance.md, "Load only what serving uses").
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { SignatureV4: Signer } = require('@smithy/signature-v4') as typeof import('@smithy/signature-v4');
    this.signer = new Signer({ credentials, region, service, sha256: NodeSha256 });
  }

  /** The signed headers (`authorization`, `x-amz-date`, `x-amz-content-sha256`, `host`, the given ones) of a POST of `bodyText` to `url`. */
  async signPost(url: URL, headers: Record<string, string>, bodyText: string, at?: Date): Promise<Record<string, string>> {
    const signed = await this.signer.sign(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port ? Number(url.port) : undefined,
        path: url.pathname,
        query: {},
        headers: { ...headers, host: url.host },
        body: bodyText,
      },
      at ? { signingDate: at } : undefined,
    );
    return signed.headers;
  }
}
