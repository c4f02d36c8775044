/** The Anthropic SDK: create, stream (input tokens in message_start), countTokens, and an error raised as the SDK's own class. */
import { load, ok } from './kit.mjs';

export default {
  name: 'anthropic-sdk',
  package: '@anthropic-ai/sdk',
  side: 'anthropic',
  async scenarios({ base, key }) {
    const { default: Anthropic } = await load('@anthropic-ai/sdk');
    const name = 'create-stream-count';
    return [
      [
        name,
        async () => {
          const client = new Anthropic({ apiKey: key, baseURL: base(name), maxRetries: 0 });
          const message = await client.messages.create({
            model: 'sandbox/echo',
            max_tokens: 200,
            messages: [{ role: 'user', content: 'Hi there' }],
          });
          ok(message.content[0].text.includes('Hi there'), 'the echo');
          const stream = client.messages.stream({
            model: 'sandbox/echo',
            max_tokens: 200,
            messages: [{ role: 'user', content: 'Stream me' }],
          });
          let start = null;
          stream.on('streamEvent', (event) => {
            if (event.type === 'message_start') start = event.message.usage.input_tokens;
          });
          const final = await stream.finalMessage();
          ok(start > 0 && final.usage.output_tokens > 0, 'input tokens in message_start');
          const count = await client.messages.countTokens({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'Count me' }] });
          ok(count.input_tokens > 0, 'a count');
          const error = await client.messages
            .create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
            .catch((e) => e);
          ok(
            error instanceof Anthropic.NotFoundError && error.error?.error?.type === 'not_found_error' && !error.message.startsWith('{'),
            'an Anthropic error',
          );
          return `create, stream (message_start ${start} input tokens), countTokens ${count.input_tokens}, NotFoundError`;
        },
      ],
    ];
  },
};
