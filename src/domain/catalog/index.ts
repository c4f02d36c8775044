/** The model catalog: data, loading, access rules, list bodies and model id resolution. */
export * from './types';
export type { CatalogSource } from './schema';
export { loadCatalog, builtinCatalog, parseCatalog, findModel, priceTokensMicro } from './catalog';
export { isModelUsable, usableTextModels, usableImageModels, usableVideoModels } from './access';
export * from './render';
export { resolveModelId, canonicalModelName, type ResolvedModel } from './resolve';
