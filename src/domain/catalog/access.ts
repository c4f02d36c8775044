import {
  type Catalog,
  type CatalogModel,
  type ImageModel,
  type ModelAccess,
  SANDBOX_VENDOR,
  type TextModel,
  type VideoModel,
} from './types';
import { vendorSettingName } from './vendors';

/**
 * Whether a key may use a model (docs/api.md, Model ids, rule 3): its vendor is
 * configured (the sandbox always is), it has a published price, and a plan key's plan
 * includes it. Listing and id resolution both ask this, so they can never disagree.
 */
export function isModelUsable(model: CatalogModel, access: ModelAccess): boolean {
  if (model.pricing === null) return false;
  if (!hasConfiguredUpstream(model, access)) return false;
  if (access.keyKind === 'plan') return access.planModels?.includes(model.id) ?? false;
  return true;
}

/**
 * Why a model the catalog knows is not usable by this key, in words an operator can act on
 * (isModelUsable's rule, one reason: the vendor, then the price, then the plan); undefined when it is.
 */
export function unusableReason(catalog: Catalog, model: CatalogModel, access: ModelAccess): string | undefined {
  if (!hasConfiguredUpstream(model, access)) {
    const vendor = model.deployments[0]!.vendor;
    const which = model.deployments.length > 1 ? 'none of its deployments' : `its vendor '${vendor}'`;
    return `is in the catalog, but ${which} is not configured on this gateway (the operator sets ${vendorSettingName(vendor, catalog.vendors.get(vendor))}).`;
  }
  if (model.pricing === null) return 'is in the catalog, but has no published price on this gateway.';
  if (access.keyKind === 'plan' && !(access.planModels?.includes(model.id) ?? false)) return "is not in this key's plan.";
  return undefined;
}

/** A model needs one configured deployment (its own vendor, for a model without a list). */
function hasConfiguredUpstream(model: CatalogModel, access: ModelAccess): boolean {
  return model.deployments.some((d) => d.vendor === SANDBOX_VENDOR || access.configuredVendors.has(d.vendor));
}

export function usableTextModels(catalog: Catalog, access: ModelAccess): TextModel[] {
  return catalog.text.filter((model) => isModelUsable(model, access));
}

export function usableImageModels(catalog: Catalog, access: ModelAccess): ImageModel[] {
  return catalog.images.filter((model) => isModelUsable(model, access));
}

export function usableVideoModels(catalog: Catalog, access: ModelAccess): VideoModel[] {
  return catalog.videos.filter((model) => isModelUsable(model, access));
}
