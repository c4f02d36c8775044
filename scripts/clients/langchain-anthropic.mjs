/** LangChain's ChatAnthropic: invoke, stream (input tokens from message_start), bindTools. */
import { load, ok } from './kit.mjs';

export default {
  name: 'langchain-anthropic',
  package: '@langchain/anthropic',
  side: 'anthropic',
  async scenarios({ base, key }) {
    const { ChatAnthropic } = await load('@langchain/anthropic');
    const name = 'invoke-stream-tools';
    return [
      [
        name,
        async () => {
          const llm = new ChatAnthropic({ model: 'sandbox/echo', apiKey: key, anthropicApiUrl: base(name), maxRetries: 0, maxTokens: 200 });
          ok(String((await llm.invoke('Hello LangChain')).content).includes('Hello LangChain'), 'the echo');
          let last = null;
          for await (const chunk of await llm.stream('Stream LangChain')) last = last ? last.concat(chunk) : chunk;
          ok(last.usage_metadata?.input_tokens > 0, `streamed input tokens (got ${last.usage_metadata?.input_tokens})`);
          const withTools = llm.bindTools([
            {
              name: 'weather',
              description: 'Weather by city',
              schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          ]);
          ok((await withTools.invoke('[sandbox:tool=weather] weather')).tool_calls?.length === 1, 'a tool call');
          return `invoke, stream (input_tokens ${last.usage_metadata.input_tokens}), bindTools`;
        },
      ],
    ];
  },
};
