/** The OpenAI Agents SDK: a function-tool agent over Responses (whole and streamed) and over Chat Completions. */
import { WEATHER, expectIncludes, load } from './kit.mjs';

export default {
  name: 'agents',
  package: '@openai/agents',
  side: 'openai',
  async scenarios({ base, key }) {
    const { Agent, Runner, tool, OpenAIProvider, setTracingDisabled } = await load('@openai/agents');
    const { default: OpenAI } = await load('openai');
    const { z } = await load('zod');
    // Traces go to OpenAI's platform, which a Tollgate key cannot reach.
    setTracingDisabled(true);
    const getWeather = tool({
      name: 'get_weather',
      description: 'Weather by city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `Sunny in ${city}`,
    });
    const agent = new Agent({ name: 'Weather', instructions: 'Answer with the weather tool.', model: 'sandbox/echo', tools: [getWeather] });
    const scenario = (name, useResponses, stream) => [
      name,
      async () => {
        const openAIClient = new OpenAI({ baseURL: `${base(name)}/v1`, apiKey: key, maxRetries: 0 });
        const result = await new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses }) }).run(
          agent,
          WEATHER,
          stream ? { stream: true } : {},
        );
        if (stream) {
          for await (const _event of result) {
            // drained: the run completes once its events are read
          }
          await result.completed;
        }
        return expectIncludes(result.finalOutput, 'Sunny in');
      },
    ];
    return [scenario('responses-tool', true, false), scenario('responses-tool-stream', true, true), scenario('chat-tool', false, false)];
  },
};
