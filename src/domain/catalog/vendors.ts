import type { KeyPrincipal } from '../shared/principal';
import type { ModelAccess, VendorProtocol } from './types';

/** Where and how to reach one configured vendor (configuration decides which are: src/config.ts). */
export interface VendorEndpoint {
  vendor: string;
  protocol: VendorProtocol;
  apiKey: string | null;
  baseUrl: string;
  /** Bedrock: the secret access key (`apiKey` is the access key id) and the AWS region. */
  secretKey?: string | null;
  region?: string | null;
  /** Azure OpenAI's `api-version`. */
  apiVersion?: string | null;
}

/** A vendor's part of its configuration variables: `OPENAI` in OPENAI_API_KEY, `MY_LLM` for `my-llm`. */
export const vendorEnvName = (vendor: string): string => vendor.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/** The variable that configures a vendor: its base URL for an OpenAI-compatible one (a key may not be needed), else its key. */
export const vendorSettingName = (vendor: string, protocol: VendorProtocol | undefined): string =>
  `${vendorEnvName(vendor)}_${protocol === 'openai-compatible' ? 'BASE_URL' : protocol === 'bedrock' ? 'ACCESS_KEY_ID' : 'API_KEY'}`;

/** What a key may use: its kind, its plan's models, and the configured vendors. */
export function modelAccessFor(principal: KeyPrincipal, configuredVendors: ReadonlySet<string>): ModelAccess {
  return { keyKind: principal.kind, planModels: principal.plan?.models, configuredVendors };
}
