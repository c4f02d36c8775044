import type { TextModel } from '../catalog/types';
import type { SpanAttributes } from '../shared/telemetry';
import type { CanonicalRequest, CanonicalUsage, FinishReason } from './canonical';

/*
 * A vendor call's span attributes, named as the OpenTelemetry GenAI semantic conventions name
 * them, so tracing back ends that know those conventions show model, vendor and tokens.
 */

/** Well-known `gen_ai.provider.name` values of our vendors; others go by their vendor key. */
const PROVIDER_NAMES: Readonly<Record<string, string>> = { gemini: 'gcp.gemini', google: 'gcp.gemini' };

const providerName = (model: TextModel): string => PROVIDER_NAMES[model.vendor] ?? model.vendor;

/** `{operation} {model}`, as the conventions name an inference span. */
export const vendorSpanName = (model: TextModel): string => `chat ${model.id}`;

export function vendorSpanAttributes(model: TextModel, requestedModel: string, request: CanonicalRequest): SpanAttributes {
  const provider = providerName(model);
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': provider,
    'gen_ai.system': provider, // the older name of the same attribute, still read by many back ends
    'gen_ai.request.model': requestedModel,
    'gen_ai.response.model': model.id,
    'gen_ai.request.max_tokens': request.maxOutputTokens,
    'tollgate.vendor_model': model.vendorModelId,
    'tollgate.stream': request.stream,
  };
}

export function usageSpanAttributes(usage: CanonicalUsage, finishReason: FinishReason | null): SpanAttributes {
  return {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'gen_ai.usage.cached_input_tokens': usage.cachedInputTokens,
    'gen_ai.usage.cache_creation.input_tokens': (usage.cacheWrite5mInputTokens ?? 0) + (usage.cacheWrite1hInputTokens ?? 0),
    'gen_ai.usage.reasoning_tokens': usage.reasoningTokens ?? undefined,
    'gen_ai.response.finish_reasons': finishReason ? [finishReason] : undefined,
  };
}
