import { loadCatalog } from '../domain/catalog/catalog';
import type { Catalog } from '../domain/catalog/types';
import { SANDBOX_VENDOR, type VendorProtocol } from '../domain/catalog/types';
import { vendorEnvName, type ServiceAccountKey, type VendorEndpoint } from '../domain/catalog/vendors';
import { baseUrl, ConfigError, optional } from './env';
import { serviceAccountKey } from './service-account';

export function loadCatalogFile(file: string | null): Catalog {
  try {
    return loadCatalog(file ?? undefined);
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error));
  }
}

/** One vendor's settings as configuration read them (`<VENDOR>_API_KEY`, `<VENDOR>_BASE_URL`), validated. */
export interface VendorSettings {
  apiKey: string | null;
  /** Without trailing slashes; null: the catalog's `base_url`, else the vendor's official default. */
  baseUrl: string | null;
  /** Bedrock's secret access key. */
  secretKey?: string | null;
  /** Vertex AI's service account key. */
  serviceAccount?: ServiceAccountKey | null;
}

/** Each vendor's official SDK default (OPENAI_ includes /v1, ANTHROPIC_ and GEMINI_ have no version). */
const DEFAULT_BASE_URLS: Partial<Record<VendorProtocol, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

/**
 * The vendors of the catalog that are configured: OpenAI, Anthropic and Gemini need their API
 * key; an OpenAI-compatible vendor needs a base URL (a local vLLM or Ollama may need no key);
 * Bedrock its access key pair, Vertex AI its service account key; the sandbox always is.
 */
export function configuredVendorEndpoints(catalog: Catalog, settings: ReadonlyMap<string, VendorSettings>): Map<string, VendorEndpoint> {
  const endpoints = new Map<string, VendorEndpoint>();
  for (const [vendor, protocol] of catalog.vendors) {
    const defaults = catalog.vendorDefaults.get(vendor);
    const apiKey = settings.get(vendor)?.apiKey ?? null;
    const region = defaults?.region ?? null;
    const baseUrl = settings.get(vendor)?.baseUrl ?? defaults?.baseUrl ?? DEFAULT_BASE_URLS[protocol] ?? regionalBaseUrl(protocol, region);
    const secretKey = settings.get(vendor)?.secretKey ?? null;
    const serviceAccount = settings.get(vendor)?.serviceAccount ?? null;
    const configured =
      protocol === 'sandbox' ||
      (protocol === 'openai-compatible'
        ? baseUrl !== ''
        : protocol === 'azure-openai'
          ? apiKey !== null && baseUrl !== ''
          : protocol === 'bedrock'
            ? apiKey !== null && secretKey !== null && baseUrl !== ''
            : protocol === 'vertex'
              ? serviceAccount !== null && baseUrl !== ''
              : apiKey !== null);
    if (configured)
      endpoints.set(vendor, {
        vendor,
        protocol,
        apiKey,
        baseUrl,
        secretKey,
        region: region ?? bedrockRegionOf(baseUrl),
        apiVersion: defaults?.apiVersion ?? (protocol === 'azure-openai' ? DEFAULT_AZURE_API_VERSION : null),
        ...(protocol === 'vertex' ? { serviceAccount, project: defaults?.project ?? serviceAccount?.projectId ?? null } : {}),
      });
  }
  if (!endpoints.has(SANDBOX_VENDOR))
    endpoints.set(SANDBOX_VENDOR, { vendor: SANDBOX_VENDOR, protocol: 'sandbox', apiKey: null, baseUrl: '' });
  return endpoints;
}

/** Azure OpenAI's generally available `api-version` used when the catalog names none. */
const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** Bedrock's and Vertex AI's endpoints are per region (Vertex's `global` location has one without a region). */
function regionalBaseUrl(protocol: VendorProtocol, region: string | null): string {
  if (region === null) return '';
  if (protocol === 'bedrock') return `https://bedrock-runtime.${region}.amazonaws.com`;
  if (protocol === 'vertex')
    return region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
  return '';
}

/** `bedrock-runtime.<region>.amazonaws.com` names its region; another host (a proxy) takes us-east-1 unless the catalog says. */
const bedrockRegionOf = (url: string): string | null => /bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com/.exec(url)?.[1] ?? null;

export function vendorSettings(env: Record<string, string | undefined>, catalog: Catalog): Map<string, VendorSettings> {
  const settings = new Map<string, VendorSettings>();
  for (const [vendor, protocol] of catalog.vendors) {
    if (vendor === SANDBOX_VENDOR) continue;
    const name = vendorEnvName(vendor);
    const defaults = catalog.vendorDefaults.get(vendor);
    if (protocol === 'vertex') {
      settings.set(vendor, vertexSettings(env, vendor, defaults?.apiKeyEnv ?? `${name}_CREDENTIALS`, defaults?.project ?? null));
      continue;
    }
    const keyVariable = defaults?.apiKeyEnv ?? `${name}_${protocol === 'bedrock' ? 'ACCESS_KEY_ID' : 'API_KEY'}`;
    const apiKey = secret(env, keyVariable);
    const found: VendorSettings = { apiKey, baseUrl: baseUrl(env, `${name}_BASE_URL`) };
    if (protocol === 'bedrock') found.secretKey = secret(env, defaults?.secretKeyEnv ?? `${name}_SECRET_ACCESS_KEY`);
    settings.set(vendor, found);
  }
  return settings;
}

/** A Vertex AI vendor: its service account key (see service-account.ts), and a project, from the catalog or the key. */
function vertexSettings(
  env: Record<string, string | undefined>,
  vendor: string,
  keyVariable: string,
  project: string | null,
): VendorSettings {
  const serviceAccount = serviceAccountKey(env, keyVariable);
  if (serviceAccount && project === null && serviceAccount.projectId === null)
    throw new ConfigError(`${keyVariable}: its key has no project_id; name the project in the catalog (vendors.${vendor}.project)`);
  return { apiKey: null, baseUrl: baseUrl(env, `${vendorEnvName(vendor)}_BASE_URL`), serviceAccount };
}

/** A credential is sent in a header (or signs one): whitespace or control characters inside would break every request. */
function secret(env: Record<string, string | undefined>, name: string): string | null {
  const value = optional(env, name);
  if (value && /[\s\x00-\x1f\x7f]/.test(value)) throw new ConfigError(`${name} must not contain spaces or control characters`);
  return value;
}
