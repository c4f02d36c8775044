import type { KeyPrincipal } from '../shared/principal';
import type { ModelAccess, VendorProtocol } from './types';

/** Where and how to reach one configured vendor (configuration decides which are: src/config.ts). */
export interface VendorEndpoint {
  vendor: string;
  protocol: VendorProtocol;
  apiKey: string | null;
  baseUrl: string;
}

/** What a key may use: its kind, its plan's models, and the configured vendors. */
export function modelAccessFor(principal: KeyPrincipal, configuredVendors: ReadonlySet<string>): ModelAccess {
  return { keyKind: principal.kind, planModels: principal.plan?.models, configuredVendors };
}
