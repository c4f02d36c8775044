import { ApiError } from '../shared/errors';
import type { VendorErrorKind } from '../shared/telemetry';

/**
 * A vendor failed: HTTP error, timeout, connection error, unparsable answer or a stream cut
 * mid-way. Answered 502 (or as the stream error event once streaming began); nothing is
 * charged for what was not delivered. `vendorStatus` is the vendor's HTTP status, if any;
 * `kind` classifies the failure for metrics (derived from the status when not given), and with
 * `retryAfterMs` (the vendor's `Retry-After`, when it sent one) tells whether another attempt,
 * or another deployment of the model, could serve the request.
 */
export class ProviderError extends ApiError {
  readonly kind: VendorErrorKind;

  constructor(
    message: string,
    readonly vendor: string,
    readonly vendorStatus: number | null = null,
    code: 'provider_error' | 'client_cancelled' = 'provider_error',
    kind?: VendorErrorKind,
    readonly retryAfterMs: number | null = null,
  ) {
    super(code, message, { vendor, ...(vendorStatus !== null ? { vendor_status: vendorStatus } : {}) });
    this.name = 'ProviderError';
    this.kind = kind ?? defaultKind(code, vendorStatus);
  }
}

function defaultKind(code: string, vendorStatus: number | null): VendorErrorKind {
  if (code === 'client_cancelled') return 'cancelled';
  if (vendorStatus === null) return 'broken_stream';
  if (vendorStatus === 429) return 'http_429';
  if (vendorStatus >= 500) return 'http_5xx';
  if (vendorStatus >= 400) return 'http_4xx';
  return 'invalid_answer'; // a 2xx whose body could not be read as the protocol says
}
