import type { KeyPrincipal } from '../accounts/auth';
import { SANDBOX_VENDOR, type Catalog, type ModelAccess, type VendorProtocol } from './types';

/** One vendor's settings as configuration read them (`<VENDOR>_API_KEY`, `<VENDOR>_BASE_URL`), validated. */
export interface VendorSettings {
  apiKey: string | null;
  /** Without trailing slashes; null: the vendor's official default. */
  baseUrl: string | null;
}

/** Where and how to reach one vendor, from `<VENDOR>_API_KEY` and `<VENDOR>_BASE_URL`. */
export interface VendorEndpoint {
  vendor: string;
  protocol: VendorProtocol;
  apiKey: string | null;
  baseUrl: string;
}

/** Each vendor's official SDK default (OPENAI_ includes /v1, ANTHROPIC_ and GEMINI_ have no version). */
const DEFAULT_BASE_URLS: Partial<Record<VendorProtocol, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

export const vendorEnvName = (vendor: string): string => vendor.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/**
 * The vendors of the catalog that are configured: OpenAI, Anthropic and Gemini need their API
 * key; an OpenAI-compatible vendor needs a base URL (a local vLLM or Ollama may need no key);
 * the sandbox always is.
 */
export function configuredVendorEndpoints(catalog: Catalog, settings: ReadonlyMap<string, VendorSettings>): Map<string, VendorEndpoint> {
  const endpoints = new Map<string, VendorEndpoint>();
  for (const [vendor, protocol] of catalog.vendors) {
    const apiKey = settings.get(vendor)?.apiKey ?? null;
    const baseUrl = settings.get(vendor)?.baseUrl ?? DEFAULT_BASE_URLS[protocol] ?? '';
    const configured = protocol === 'sandbox' || (protocol === 'openai-compatible' ? baseUrl !== '' : apiKey !== null);
    if (configured) endpoints.set(vendor, { vendor, protocol, apiKey, baseUrl });
  }
  if (!endpoints.has(SANDBOX_VENDOR)) endpoints.set(SANDBOX_VENDOR, { vendor: SANDBOX_VENDOR, protocol: 'sandbox', apiKey: null, baseUrl: '' });
  return endpoints;
}

/** What a key may use: its kind, its plan's models, and the configured vendors. */
export function modelAccessFor(principal: KeyPrincipal, configuredVendors: ReadonlySet<string>): ModelAccess {
  return { keyKind: principal.kind, planModels: principal.plan?.models, configuredVendors };
}
