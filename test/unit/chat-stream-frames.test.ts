import { sseData } from '../../src/protocols/sse-write';
import { ChatStreamEncoder } from '../../src/protocols/openai-chat/stream-encoder';

/**
 * The Chat stream encoder writes a text delta's frame from a template (the commonest event);
 * the bytes must be exactly those of the chunk object serialised, for any text and any answer
 * meta: both ways, compared.
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

  test('encode() uses it for text deltas after the role chunk', () => {
    const encoder = new ChatStreamEncoder({ ...metas[0]!, includeUsage: true });
    const role = new ChatStreamEncoder({ ...metas[0]!, includeUsage: true }).start();
    expect(encoder.encode({ type: 'text-delta', text: 'Hi "there"' })).toBe(role + encoder.textFrame('Hi "there"'));
    expect(encoder.encode({ type: 'text-delta', text: 'again' })).toBe(encoder.textFrame('again'));
  });
});
