import { checkVendorCapabilities } from './capabilities';
import { refuseTextField, TextFieldRefusal } from './field-keys';
import type { VendorCapabilities } from './canonical';
import type { CanonicalRequest, CanonicalTool } from './canonical';
import { MAX_SCHEMA_BYTES, MIN_THINKING_HEADROOM } from './rules';

/**
 * The rules every text request obeys whatever its format, checked once the model is resolved
 * and the output limit clamped: a tool choice names a declared tool (and `required` has one),
 * a structured-output schema fits its size limit, reasoning settings are dropped for models
 * without an effort setting (so a thinking budget has nothing to constrain), thinking leaves
 * room for an answer, and the serving vendor can take the tools and items sent. Throws a 400
 * naming the field by its domain key (field-keys.ts); answers the request to send.
 */
export function validateCanonicalRequest(request: CanonicalRequest, vendor: VendorCapabilities): CanonicalRequest {
  const { toolChoice, tools } = request;
  if (toolChoice === 'required' && tools.length === 0)
    refuseTextField('text.toolChoice', (names) => `${names.requiredChoice} needs at least one tool in tools`);
  if (typeof toolChoice === 'object') {
    const kind = toolChoice.kind ?? 'function';
    if (!declares(tools, kind, toolChoice.name))
      refuseTextField('text.toolChoiceName', (names) => `'${toolChoice.name}' does not name ${names.toolNoun[kind]} in tools`);
  }
  if (request.responseFormat?.type === 'json_schema') {
    const bytes = Buffer.byteLength(JSON.stringify(request.responseFormat.schema), 'utf8');
    if (bytes > MAX_SCHEMA_BYTES)
      refuseTextField(
        'text.schema',
        () => `is ${bytes} bytes; structured-output schemas are limited to ${MAX_SCHEMA_BYTES} bytes (32 KiB)`,
      );
  }
  const adjusted = withReasoningForModel(request);
  const { mode, budgetTokens } = adjusted.reasoning;
  if (mode === 'enabled' && budgetTokens !== undefined && adjusted.maxOutputTokens - budgetTokens < MIN_THINKING_HEADROOM) {
    const used = adjusted.maxOutputTokens;
    throw new TextFieldRefusal(
      'text.outputLimit',
      ({ fields }) =>
        `${fields['text.outputLimit']} (${used} as used for ${adjusted.model.id}) must exceed ${fields['text.thinkingBudget']} (${budgetTokens}) by at least ${MIN_THINKING_HEADROOM}`,
      ({ fields }) => ({ [fields['text.outputLimit']]: used, budget_tokens: budgetTokens }),
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
