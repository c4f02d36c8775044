import { ApiError } from '../shared/errors';

/**
 * A vendor failed: HTTP error, timeout, connection error, unparsable answer or a stream cut
 * mid-way. Answered 502 (or as the stream error event once streaming began); nothing is
 * charged for what was not delivered. `vendorStatus` is the vendor's HTTP status, if any.
 */
export class ProviderError extends ApiError {
  constructor(
    message: string,
    readonly vendor: string,
    readonly vendorStatus: number | null = null,
    code = 'provider_error',
  ) {
    super(502, code, message, { vendor, ...(vendorStatus !== null ? { vendor_status: vendorStatus } : {}) });
    this.name = 'ProviderError';
  }
}
