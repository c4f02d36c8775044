import { sseData } from '../../src/protocols/sse-write';
import { ChatStreamEncoder } from '../../src/protocols/openai-chat/stream-encoder';

/**
 * The Chat stream encoder writes its chunks from a head serialised once per answer, and a text
 * delta (the commonest event) from a template; the bytes must be exactly those of the chunk
 * object serialised, for any text and any answer meta: both ways, compared.
 */
const texts = [
  'Hello',
  '',
  ' ',
  'quotes " and \\ backslashes \\" mixed',
  'line\nbreaks\r\nand\ttabs',
  'control \u0000 \u0001 \u001f and \u007f',
  'unicode: é, 日本語, emoji 🦊 and ZWJ 👩‍💻',
  'lone surrogates \ud800 and \udfff',
  '\u2028 and \u2029 separators',
  '\u0000text\u0000',
  '"\u0000text\u0000"',
  'x'.repeat(10_000),
];
const metas = [
  { id: 'chatcmpl-1', created: 1_760_000_000, model: 'openai/gpt-4o-mini' },
  { id: 'chatcmpl-"odd\\id', created: 0, model: 'vendor/model "with" \u0000text\u0000 inside' },
];

describe('ChatStreamEncoder text frames', () => {
  for (const includeUsage of [true, false]) {
    for (const meta of metas) {
      test(`exactly the serialised chunk, include_usage ${includeUsage}, model ${JSON.stringify(meta.model)}`, () => {
        const encoder = new ChatStreamEncoder({ ...meta, includeUsage });
        for (const text of texts) {
          const general = sseData({
            id: meta.id,
            object: 'chat.completion.chunk',
            created: meta.created,
            model: meta.model,
            choices: [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }],
            ...(includeUsage ? { usage: null } : {}),
          });
          expect(encoder.textFrame(text)).toBe(general);
        }
      });
    }
  }

  for (const includeUsage of [true, false]) {
    for (const meta of metas) {
      test(`every other chunk too (role, tool call, finish, usage), include_usage ${includeUsage}, model ${JSON.stringify(meta.model)}`, () => {
        const chunk = (choices: unknown[], usage: unknown = null) =>
          sseData({
            id: meta.id,
            object: 'chat.completion.chunk',
            created: meta.created,
            model: meta.model,
            choices,
            ...(includeUsage ? { usage } : {}),
          });
        const encoder = new ChatStreamEncoder({ ...meta, includeUsage });
        expect(encoder.start()).toBe(
          chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]),
        );
        expect(encoder.encode({ type: 'tool-call-start', index: 3, id: 'call_"1', name: 'get "it"', kind: 'function' })).toBe(
          chunk([
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, id: 'call_"1', type: 'function', function: { name: 'get "it"', arguments: '' } }] },
              logprobs: null,
              finish_reason: null,
            },
          ]),
        );
        const usage = { inputTokens: 7, cachedInputTokens: 2, outputTokens: 5, reasoningTokens: 1 };
        const finished = encoder.encode({ type: 'finish', reason: 'tool_calls', refusal: false, usage });
        const expectedUsage = {
          prompt_tokens: 7,
          completion_tokens: 5,
          total_tokens: 12,
          prompt_tokens_details: { cached_tokens: 2 },
          completion_tokens_details: { reasoning_tokens: 1 },
        };
        expect(finished).toBe(
          chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }]) +
            (includeUsage ? chunk([], expectedUsage) : '') +
            'data: [DONE]\n\n',
        );
      });
    }
  }

  test('encode() uses it for text deltas after the role chunk', () => {
    const encoder = new ChatStreamEncoder({ ...metas[0]!, includeUsage: true });
    const role = new ChatStreamEncoder({ ...metas[0]!, includeUsage: true }).start();
    expect(encoder.encode({ type: 'text-delta', text: 'Hi "there"' })).toBe(role + encoder.textFrame('Hi "there"'));
    expect(encoder.encode({ type: 'text-delta', text: 'again' })).toBe(encoder.textFrame('again'));
  });
});
