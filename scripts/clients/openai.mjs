/** The openai SDK: Chat Completions, Responses, structured output, models.retrieve, videos.delete. */
import { WEATHER, expectIncludes, load } from './kit.mjs';

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather by city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const responsesTools = [
  { type: 'function', name: 'get_weather', description: 'Weather by city', parameters: weatherTool.function.parameters, strict: false },
];

export default {
  name: 'openai',
  package: 'openai',
  side: 'openai',
  async scenarios({ base, key }) {
    const { default: OpenAI } = await load('openai');
    const { zodResponseFormat, zodTextFormat } = await load('openai/helpers/zod');
    const { z } = await load('zod');
    const scenario = (name, run) => [name, () => run(new OpenAI({ baseURL: `${base(name)}/v1`, apiKey: key, maxRetries: 0 }))];
    return [
      scenario('chat-create', async (client) =>
        expectIncludes(
          (
            await client.chat.completions.create({
              model: 'sandbox/echo',
              messages: [
                { role: 'system', content: 'Be brief.' },
                { role: 'user', content: 'Hello chat' },
              ],
            })
          ).choices[0].message.content,
          'Hello chat',
        ),
      ),
      scenario('chat-stream', async (client) => {
        let text = '';
        let usage;
        for await (const chunk of await client.chat.completions.create({
          model: 'sandbox/echo',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'Hello stream' }],
        })) {
          text += chunk.choices[0]?.delta.content ?? '';
          usage = chunk.usage ?? usage;
        }
        if (!usage?.total_tokens) throw new Error('no usage chunk');
        return expectIncludes(text, 'Hello stream');
      }),
      scenario('chat-tools', async (client) => {
        const messages = [{ role: 'user', content: WEATHER }];
        const first = await client.chat.completions.create({ model: 'sandbox/echo', messages, tools: [weatherTool] });
        const call = first.choices[0].message.tool_calls?.[0];
        if (!call) throw new Error('no tool call');
        messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21°C' });
        return expectIncludes(
          (await client.chat.completions.create({ model: 'sandbox/echo', messages, tools: [weatherTool] })).choices[0].message.content,
          'Sunny',
        );
      }),
      scenario('chat-parse', async (client) => {
        const parsed = await client.chat.completions.parse({
          model: 'sandbox/echo',
          messages: [{ role: 'user', content: 'A city' }],
          response_format: zodResponseFormat(z.object({ city: z.string(), population: z.number() }), 'city'),
        });
        return JSON.stringify(parsed.choices[0].message.parsed);
      }),
      scenario('responses-create', async (client) =>
        expectIncludes(
          (await client.responses.create({ model: 'sandbox/echo', instructions: 'Be brief.', input: 'Hello responses', store: false }))
            .output_text,
          'Hello responses',
        ),
      ),
      scenario('responses-stream', async (client) => {
        const stream = client.responses.stream({
          model: 'sandbox/reasoner',
          input: 'Hello streamed responses',
          reasoning: { effort: 'low', summary: 'auto' },
        });
        return expectIncludes((await stream.finalResponse()).output_text, 'Hello streamed responses');
      }),
      scenario('responses-tools', async (client) => {
        const first = await client.responses.create({ model: 'sandbox/echo', input: WEATHER, tools: responsesTools, store: false });
        const call = first.output.find((item) => item.type === 'function_call');
        if (!call) throw new Error('no function_call');
        const input = [
          { role: 'user', content: WEATHER },
          ...first.output,
          { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21°C' },
        ];
        return expectIncludes(
          (await client.responses.create({ model: 'sandbox/echo', tools: responsesTools, store: false, input })).output_text,
          'Sunny',
        );
      }),
      scenario('responses-parse', async (client) => {
        const parsed = await client.responses.parse({
          model: 'sandbox/echo',
          input: 'A city',
          text: { format: zodTextFormat(z.object({ city: z.string() }), 'city') },
        });
        return JSON.stringify(parsed.output_parsed);
      }),
      scenario('models-retrieve', async (client) => {
        const { data, response } = await client.models.retrieve('echo').withResponse();
        return `${data.id} (routed from ${response.headers.get('x-service-model-routed-from')})`;
      }),
      scenario('videos-delete', async (client) => {
        let video = await client.videos.create({ model: 'sandbox/video', prompt: 'a lighthouse', seconds: '4' });
        for (let i = 0; i < 200 && video.status !== 'completed' && video.status !== 'failed'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          video = await client.videos.retrieve(video.id);
        }
        return JSON.stringify(await client.videos.delete(video.id));
      }),
    ];
  },
};
