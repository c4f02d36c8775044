/** The Vercel AI SDK's anthropic provider: generateText, streamText with a tool call (eager_input_streaming), streamObject. */
import { load, ok } from './kit.mjs';

export default {
  name: 'ai-sdk-anthropic',
  package: '@ai-sdk/anthropic',
  side: 'anthropic',
  async scenarios({ base, key }) {
    const { createAnthropic } = await load('@ai-sdk/anthropic');
    const { generateText, streamText, streamObject, tool, jsonSchema } = await load('ai');
    const name = 'generateText-streamText-tools-streamObject';
    return [
      [
        name,
        async () => {
          const model = createAnthropic({ apiKey: key, baseURL: `${base(name)}/v1` })('sandbox/echo');
          const text = await generateText({ model, prompt: 'Hello AI SDK', maxRetries: 0 });
          ok(text.text.includes('Hello AI SDK'), 'the echo');
          const weather = tool({
            description: 'Weather by city',
            inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
            execute: async ({ city }) => `Sunny in ${city}`,
          });
          const streamed = streamText({ model, prompt: '[sandbox:tool=weather] weather please', tools: { weather }, maxRetries: 0 });
          for await (const _part of streamed.textStream) {
            // drained: its promises settle as the stream is read
          }
          ok((await streamed.toolCalls).length === 1, 'a tool call');
          const object = streamObject({
            model,
            prompt: 'An object',
            schema: jsonSchema({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }),
            maxRetries: 0,
          });
          for await (const _partial of object.partialObjectStream) {
            // drained
          }
          const value = await object.object;
          ok(typeof value.name === 'string', 'an object');
          ok((await streamed.usage).inputTokens > 0, 'input tokens');
          return `generateText, streamText with a tool call, streamObject ${JSON.stringify(value)}`;
        },
      ],
    ];
  },
};
