import { badRequest } from '../shared/errors';
import { checkVendorCapabilities } from './capabilities';
import type { VendorCapabilities } from './canonical';
import type { CanonicalRequest, CanonicalTool } from './canonical';
import { MAX_SCHEMA_BYTES, MIN_THINKING_HEADROOM } from './rules';
import type { DecodedTextRequest } from './service';

const refuse = (field: string, problem: string): never => {
  throw badRequest(`${field} ${problem}`, { field });
};

/**
 * The rules every text request obeys whatever its format, checked once the model is resolved
 * and the output limit clamped: a tool choice names a declared tool (and `required` has one),
 * a structured-output schema fits its size limit, reasoning settings are dropped for models
 * without an effort setting (so a thinking budget has nothing to constrain), thinking leaves
 * room for an answer, and the serving vendor can take the tools and items sent. Throws a 400
 * naming the field; answers the request to send.
 */
export function validateCanonicalRequest(
  request: CanonicalRequest,
  decoded: Pick<DecodedTextRequest, 'outputLimit' | 'fields'>,
  vendor: VendorCapabilities,
): CanonicalRequest {
  const { fields } = decoded;
  const limitField = decoded.outputLimit.field;
  const { toolChoice, tools } = request;
  if (toolChoice === 'required' && tools.length === 0)
    refuse(fields.requiredToolChoice.field, `${fields.requiredToolChoice.value} needs at least one tool in tools`);
  if (typeof toolChoice === 'object' && !declares(tools, toolChoice.kind ?? 'function', toolChoice.name)) {
    refuse(fields.namedToolChoice.field, `'${toolChoice.name}' does not name ${fields.namedToolChoice.noun} in tools`);
  }
  if (request.responseFormat?.type === 'json_schema') {
    const bytes = Buffer.byteLength(JSON.stringify(request.responseFormat.schema), 'utf8');
    if (bytes > MAX_SCHEMA_BYTES)
      refuse(fields.schema ?? 'schema', `is ${bytes} bytes; structured-output schemas are limited to ${MAX_SCHEMA_BYTES} bytes (32 KiB)`);
  }
  const adjusted = withReasoningForModel(request);
  const { mode, budgetTokens } = adjusted.reasoning;
  if (mode === 'enabled' && budgetTokens !== undefined && adjusted.maxOutputTokens - budgetTokens < MIN_THINKING_HEADROOM) {
    throw badRequest(
      `${limitField} (${adjusted.maxOutputTokens} as used for ${adjusted.model.id}) must exceed ${fields.thinkingBudget ?? 'the thinking budget'} (${budgetTokens}) by at least ${MIN_THINKING_HEADROOM}`,
      { field: limitField, [limitField]: adjusted.maxOutputTokens, budget_tokens: budgetTokens },
    );
  }
  checkVendorCapabilities(adjusted, vendor);
  return adjusted;
}

/**
 * A model without an effort setting ignores reasoning settings: all are dropped (a thinking
 * budget too, since such a model cannot think).
 */
function withReasoningForModel(request: CanonicalRequest): CanonicalRequest {
  if (request.model.effort !== 'none') return request;
  const { reasoning } = request;
  if (reasoning.mode === 'default' && reasoning.effort === undefined && reasoning.budgetTokens === undefined) return request;
  return { ...request, reasoning: { mode: 'default' } };
}

function declares(tools: readonly CanonicalTool[], kind: 'function' | 'custom', name: string): boolean {
  for (const tool of tools) if (tool.type === kind && tool.name === name) return true;
  return false;
}
