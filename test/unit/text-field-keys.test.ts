import { builtinCatalog, findModel } from '../../src/domain/catalog/catalog';
import type { CanonicalRequest, VendorCapabilities } from '../../src/domain/generation/canonical';
import { namedFor, TextFieldRefusal } from '../../src/domain/generation/field-keys';
import { clampOutputLimit } from '../../src/domain/generation/rules';
import { validateCanonicalRequest } from '../../src/domain/generation/validate';
import { ApiError } from '../../src/domain/shared/errors';
import { decodeMessagesIngress } from '../../src/protocols/anthropic-messages/decode-request';
import { decodeChatIngress } from '../../src/protocols/openai-chat/decode-request';
import { decodeResponsesIngress } from '../../src/protocols/openai-responses/decode-request';

const EVERY_CAPABILITY: VendorCapabilities = {
  customTools: true,
  mcpServers: true,
  mcpCalls: true,
  mcpApprovals: true,
  mcpCallLimit: true,
};
const model = findModel(builtinCatalog(), 'anthropic/claude-sonnet-4-5', 'text')!;

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

describe('text refusals carry domain field keys; each format names them', () => {
  test('the rules refuse by key, with no wire name in the domain', () => {
    const request = { messages: [{ role: 'user', content: 'Hi' }], tools: [], toolChoice: 'required', model, maxOutputTokens: 100 };
    const refusal = thrown(() => validateCanonicalRequest(request as unknown as CanonicalRequest, EVERY_CAPABILITY));
    expect(refusal).toBeInstanceOf(TextFieldRefusal);
    expect(refusal).toMatchObject({ status: 400, code: 'bad_request', details: { field: 'text.toolChoice' } });
    expect(thrown(() => clampOutputLimit(model, 0))).toMatchObject({ details: { field: 'text.outputLimit' } });
  });

  test.each([
    ['Chat', 'max_tokens', decodeChatIngress({ model: 'x', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 }).names],
    ['Chat', 'max_completion_tokens', decodeChatIngress({ model: 'x', messages: [{ role: 'user', content: 'Hi' }] }).names],
    ['Responses', 'max_output_tokens', decodeResponsesIngress({ model: 'x', input: 'Hi' }).names],
    ['Messages', 'max_tokens', decodeMessagesIngress({ model: 'x', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }).names],
  ])('%s names the output limit %s, as the request sent it', (_format, field, names) => {
    const named = namedFor(
      thrown(() => clampOutputLimit(model, -1)),
      names,
    ) as ApiError;
    expect(named).toBeInstanceOf(ApiError);
    expect(named).not.toBeInstanceOf(TextFieldRefusal);
    expect(named.message).toBe(`${field} must be a positive integer`);
    expect(named.details).toEqual({ field });
  });

  test('any other error passes unnamed', () => {
    const other = new Error('boom');
    expect(namedFor(other, decodeResponsesIngress({ model: 'x', input: 'Hi' }).names)).toBe(other);
  });
});
