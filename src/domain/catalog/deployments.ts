/** A model's upstream deployments, read from its catalog entry (or made from its own vendor), and the vendor kinds each model kind may route to. */
import type { ParsedCatalogSource } from './schema';
import { FieldError, freeze, type Path } from './building';
import { type Deployment, SANDBOX_VENDOR, type VendorDefaults, type VendorProtocol } from './types';
import { vertexPublisher } from './vendors';

type ModelSource = ParsedCatalogSource['models'][number];

const DEFAULT_PROTOCOL: Readonly<Record<string, VendorProtocol>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gemini',
  [SANDBOX_VENDOR]: 'sandbox',
};

/** A vendor's protocol: its `vendors` entry, else the well-known name's, else OpenAI-compatible. */
export const protocolOf = (vendor: string, defaults: ReadonlyMap<string, VendorDefaults>): VendorProtocol =>
  defaults.get(vendor)?.protocol ?? DEFAULT_PROTOCOL[vendor] ?? 'openai-compatible';

/** The vendor kinds a media model's deployments may name, and the refusal that lists them. */
interface DeploymentKinds {
  allowed: ReadonlySet<VendorProtocol>;
  refusal: string;
}

/** The model's deployments, by priority; without a list, the one its own vendor makes. */
export function buildDeployments(
  entry: ModelSource,
  base: { vendor: string; protocol: VendorProtocol; vendorModelId: string },
  at: Path,
  defaults: ReadonlyMap<string, VendorDefaults>,
  kinds?: DeploymentKinds,
): readonly Deployment[] {
  if (entry.deployments === undefined) {
    checkVertexModel(base.protocol, base.vendorModelId, [...at, 'vendor_model_id']);
    return freeze([
      freeze({
        name: base.vendor,
        vendor: base.vendor,
        protocol: base.protocol,
        vendorModelId: base.vendorModelId,
        priority: 0,
        weight: 1,
      }),
    ]);
  }
  const seen = new Set<string>();
  const deployments = entry.deployments.map((d, i) => {
    if (seen.has(d.vendor))
      throw new FieldError([...at, 'deployments', i, 'vendor'], `repeats the vendor "${d.vendor}" (one deployment per vendor and model)`);
    seen.add(d.vendor);
    const protocol = protocolOf(d.vendor, defaults);
    if (protocol === 'sandbox' || d.vendor === SANDBOX_VENDOR)
      throw new FieldError([...at, 'deployments', i, 'vendor'], 'must not be the sandbox');
    // Checked at the entry's position in the file, before the list is sorted by priority.
    if (kinds && !kinds.allowed.has(protocol)) throw new FieldError([...at, 'deployments', i, 'vendor'], kinds.refusal);
    const vendorModelId = d.vendor_model_id ?? base.vendorModelId;
    checkVertexModel(protocol, vendorModelId, [...at, 'deployments', i, 'vendor_model_id']);
    return freeze({
      name: d.vendor,
      vendor: d.vendor,
      protocol,
      vendorModelId,
      priority: d.priority ?? 0,
      weight: d.weight ?? 1,
    });
  });
  return freeze(deployments.sort((a, b) => a.priority - b.priority));
}

/** The vendor kinds whose image API an image model's deployment can call. */
export const IMAGE_DEPLOYMENTS: DeploymentKinds = {
  allowed: new Set<VendorProtocol>(['openai', 'azure-openai']),
  refusal: 'must be an "openai" or "azure-openai" vendor (the ones that serve images)',
};

/** The vendor kinds whose video API a video model's deployment can call (Sora on OpenAI and Azure, Veo on the Gemini API). */
export const VIDEO_DEPLOYMENTS: DeploymentKinds = {
  allowed: new Set<VendorProtocol>(['openai', 'azure-openai', 'gemini']),
  refusal: 'must be an "openai", "azure-openai" or "gemini" vendor (video APIs)',
};

/** Vertex AI serves each publisher through its own API: the model id must say which (Claude, Gemini, an open model). */
export function checkVertexModel(protocol: VendorProtocol, vendorModelId: string, at: Path): void {
  if (protocol === 'vertex' && vertexPublisher(vendorModelId) === null)
    throw new FieldError(
      at,
      'must be a Claude ("claude-…") or Gemini ("gemini-…") model id, or an open model\'s "publisher/model" id, for a vertex vendor',
    );
}
