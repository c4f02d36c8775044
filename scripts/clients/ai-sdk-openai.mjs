/** The Vercel AI SDK's openai provider, on Responses and on Chat Completions: text with a tool loop, structured objects, whole and streamed. */
import { WEATHER, expectIncludes, load } from './kit.mjs';

export default {
  name: 'ai-sdk-openai',
  package: '@ai-sdk/openai',
  side: 'openai',
  async scenarios({ base, key }) {
    const { createOpenAI } = await load('@ai-sdk/openai');
    const { generateText, streamText, generateObject, streamObject, tool, stepCountIs } = await load('ai');
    const { z } = await load('zod');
    const tools = {
      get_weather: tool({
        description: 'Weather by city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `Sunny in ${city}`,
      }),
    };
    const schema = z.object({ city: z.string(), population: z.number() });
    return ['responses', 'chat'].flatMap((mode) => {
      const model = (name) => createOpenAI({ baseURL: `${base(name)}/v1`, apiKey: key })[mode]('sandbox/echo');
      const name = (what) => `${mode}-${what}`;
      return [
        [
          name('generateText-tools'),
          async () =>
            expectIncludes(
              (await generateText({ model: model(name('generateText-tools')), prompt: WEATHER, tools, stopWhen: stepCountIs(3) })).text,
              'Sunny in',
            ),
        ],
        [
          name('streamText-tools'),
          async () => {
            const result = streamText({ model: model(name('streamText-tools')), prompt: WEATHER, tools, stopWhen: stepCountIs(3) });
            let text = '';
            for await (const part of result.textStream) text += part;
            return expectIncludes(text, 'Sunny in');
          },
        ],
        [
          name('generateObject'),
          async () => JSON.stringify((await generateObject({ model: model(name('generateObject')), schema, prompt: 'A city' })).object),
        ],
        [
          name('streamObject'),
          async () => {
            const result = streamObject({ model: model(name('streamObject')), schema, prompt: 'A city' });
            for await (const _partial of result.partialObjectStream) {
              // drained: its promises settle as the stream is read
            }
            return JSON.stringify(await result.object);
          },
        ],
      ];
    });
  },
};
