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
  /** Vertex AI: the service account that mints its access tokens, and the Google Cloud project. */
  serviceAccount?: ServiceAccountKey | null;
  project?: string | null;
}

/** The parts of a Google service account key (its JSON file) that sign a token request. */
export interface ServiceAccountKey {
  clientEmail: string;
  /** PEM (PKCS#8), never logged nor echoed. */
  privateKey: string;
  /** Where tokens are minted (`https://oauth2.googleapis.com/token`); the signed assertion's audience. */
  tokenUri: string;
  projectId: string | null;
}

/**
 * Which of Vertex AI's APIs serves a model, told by the model id Google gives it: Claude's
 * (`claude-…`), Gemini's (`gemini-…`), or the OpenAI-compatible one of open models, named
 * `publisher/model` (`meta/llama-3.3-70b-instruct-maas`).
 */
export type VertexPublisher = 'anthropic' | 'google' | 'openapi';

export function vertexPublisher(vendorModelId: string): VertexPublisher | null {
  if (vendorModelId.startsWith('claude-')) return 'anthropic';
  if (vendorModelId.startsWith('gemini-')) return 'google';
  if (/^[a-z0-9-]+\/[A-Za-z0-9._-]+$/.test(vendorModelId)) return 'openapi';
  return null;
}

/** A vendor's part of its configuration variables: `OPENAI` in OPENAI_API_KEY, `MY_LLM` for `my-llm`. */
export const vendorEnvName = (vendor: string): string => vendor.toUpperCase().replace(/[^A-Z0-9]/g, '_');

const SETTING_SUFFIX: Partial<Record<VendorProtocol, string>> = {
  'openai-compatible': 'BASE_URL',
  bedrock: 'ACCESS_KEY_ID',
  vertex: 'CREDENTIALS',
};

/** The variable that configures a vendor: its base URL for an OpenAI-compatible one (a key may not be needed), else its key. */
export const vendorSettingName = (vendor: string, protocol: VendorProtocol | undefined): string =>
  `${vendorEnvName(vendor)}_${SETTING_SUFFIX[protocol ?? 'openai'] ?? 'API_KEY'}`;

/** What a key may use: its kind, its plan's models, and the configured vendors. */
export function modelAccessFor(principal: KeyPrincipal, configuredVendors: ReadonlySet<string>): ModelAccess {
  return { keyKind: principal.kind, planModels: principal.plan?.models, configuredVendors };
}
