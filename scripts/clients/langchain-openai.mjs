/** LangChain's ChatOpenAI, on Chat Completions and with useResponsesApi: invoke, stream (usage), a tool loop, structured output. */
import { WEATHER, expectIncludes, load } from './kit.mjs';

export default {
  name: 'langchain-openai',
  package: '@langchain/openai',
  side: 'openai',
  async scenarios({ base, key }) {
    const { ChatOpenAI } = await load('@langchain/openai');
    const { tool } = await load('@langchain/core/tools');
    const { HumanMessage, ToolMessage } = await load('@langchain/core/messages');
    const { z } = await load('zod');
    const getWeather = tool(async ({ city }) => `Sunny in ${city}`, {
      name: 'get_weather',
      description: 'Weather by city',
      schema: z.object({ city: z.string() }),
    });
    return [
      ['chat', false],
      ['responses', true],
    ].flatMap(([prefix, useResponsesApi]) => {
      const llm = (name) =>
        new ChatOpenAI({
          model: 'sandbox/echo',
          apiKey: key,
          configuration: { baseURL: `${base(name)}/v1` },
          useResponsesApi,
          maxRetries: 0,
        });
      const name = (what) => `${prefix}-${what}`;
      return [
        [name('invoke'), async () => expectIncludes((await llm(name('invoke')).invoke('Hello LangChain')).text, 'Hello LangChain')],
        [
          name('stream'),
          async () => {
            let text = '';
            let usage;
            for await (const chunk of await llm(name('stream')).stream('Hello streamed LangChain')) {
              text += chunk.text;
              usage = chunk.usage_metadata ?? usage;
            }
            if (!usage?.input_tokens) throw new Error(`no input tokens in usage: ${JSON.stringify(usage)}`);
            return expectIncludes(text, 'Hello streamed LangChain');
          },
        ],
        [
          name('tools'),
          async () => {
            const model = llm(name('tools')).bindTools([getWeather]);
            const messages = [new HumanMessage(WEATHER)];
            const first = await model.invoke(messages);
            const call = first.tool_calls?.[0];
            if (!call) throw new Error('no tool call');
            messages.push(first, new ToolMessage({ tool_call_id: call.id, content: await getWeather.invoke(call.args) }));
            return expectIncludes((await model.invoke(messages)).text, 'Sunny in');
          },
        ],
        [
          name('structured'),
          async () =>
            JSON.stringify(
              await llm(name('structured'))
                .withStructuredOutput(z.object({ city: z.string() }))
                .invoke('A city'),
            ),
        ],
      ];
    });
  },
};
