import type { KeyPrincipal } from '../shared/principal';
import { resolveModelId } from '../catalog/resolve';
import type { Catalog, TextModel } from '../catalog/types';
import { modelAccessFor } from '../catalog/vendors';
import { estimateInputTokens } from '../billing/estimate';
import { withFields } from '../shared/objects';
import type { Cancellation } from './cancellation';
import type { TextProviderRegistry } from './canonical';
import { countPromptTokens, promptForEstimate } from './prompt-size';
import { clampOutputLimit } from './rules';
import type { DecodedTextRequest } from './service';
import { validateCanonicalRequest } from './validate';
import { settleForVendor } from './hints';

export interface TokenCountDeps {
  catalog: Catalog;
  configuredVendors: ReadonlySet<string>;
  providers: TextProviderRegistry;
}

export interface TokenCount {
  model: TextModel;
  /** The id the client sent, when it differs from the service id. */
  routedFrom: string | null;
  inputTokens: number;
}

/**
 * Counts a prompt's input tokens (`POST /v1/messages/count_tokens`): the model is resolved and
 * the request checked as a generation would be (same access, same refusals), then counted by
 * the vendor where it has a counting endpoint, else by Tollgate's tokenizer. Free: nothing is
 * reserved or charged; admission (rate limits) is the plane's, as for any request.
 */
export class TokenCounter {
  constructor(private readonly deps: TokenCountDeps) {}

  async count(principal: KeyPrincipal, decoded: DecodedTextRequest, signal: Cancellation): Promise<TokenCount> {
    const { deps } = this;
    const { model, routedFrom } = resolveModelId(deps.catalog, decoded.modelId, 'text', modelAccessFor(principal, deps.configuredVendors));
    const { maxOutputTokens } = clampOutputLimit(model, decoded.outputLimit.value, decoded.outputLimit.fallback);
    const provider = deps.providers.forModel(model);
    const checked = validateCanonicalRequest(withFields(decoded.request, { model, maxOutputTokens, stream: false }), provider.capabilities);
    const { request } = settleForVendor(checked, provider, decoded.hintNames, (r) => estimateInputTokens(promptForEstimate(r)));
    const inputTokens = provider.countTokens ? await provider.countTokens(request, signal) : countPromptTokens(request);
    return { model, routedFrom, inputTokens };
  }
}
