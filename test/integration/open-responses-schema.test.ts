import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { textHarnessOnFakes } from '../support/vendor-fakes';
import { SseDecoder } from '../../src/protocols/sse-parse';

/**
 * Tollgate's Responses answers against the Open Responses schema (vendored in
 * test/fixtures/open-responses with its source and license): every response object, whole or
 * carried by a stream event, is a valid `ResponseResource`, and every stream event is valid
 * against the `*StreamingEvent` schema of its type. The requests are those of the Open
 * Responses compliance runner's stateless HTTP tests, plus a tool call streamed, an answer cut
 * by its output limit and a stream that fails; served by the sandbox models and by the OpenAI
 * (both upstreams), Anthropic and Gemini fakes.
 */

const SCHEMA = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'open-responses', 'openapi.json'), 'utf8')) as {
  components: { schemas: Record<string, { properties?: { type?: { enum?: string[] } } }> };
};
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(SCHEMA, 'open-responses');
const schemaOf = (name: string): ValidateFunction => ajv.getSchema(`open-responses#/components/schemas/${name}`)!;
const responseResource = schemaOf('ResponseResource');
/** Each stream event type's schema, by the `type` its schema allows. */
const eventSchemas = new Map(
  Object.entries(SCHEMA.components.schemas)
    .filter(([name]) => name.endsWith('StreamingEvent'))
    .map(([name, schema]) => [schema.properties!.type!.enum![0]!, schemaOf(name)] as const),
);

function problems(validate: ValidateFunction, value: unknown, where: string): string[] {
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${where}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** A response object, and any Open Responses schema problem with it. */
const checkResponse = (response: unknown, where = 'response'): string[] => problems(responseResource, response, where);

/** Each event against its type's schema (a type Open Responses lacks is a problem too), and the response objects events carry. */
function checkEvents(events: Array<Record<string, unknown>>): string[] {
  return events.flatMap((event, i) => {
    const validate = eventSchemas.get(String(event.type));
    if (!validate) return [`event ${i} has a type Open Responses does not define: ${String(event.type)}`];
    return problems(validate, event, `event ${i} (${String(event.type)})`);
  });
}

const on = textHarnessOnFakes();

type Script = 'text' | 'tool' | 'length' | 'cut';

/** Who serves a model, and how its fake is told to answer (the sandbox follows the request itself). */
const SERVERS: Record<string, (script: Script) => void> = {
  'sandbox/echo': () => undefined,
  'sandbox/reasoner': () => undefined,
  'openai/gpt-4o-mini': (script) =>
    on.openai.script(
      script === 'tool'
        ? { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' }] }
        : script === 'length'
          ? { text: 'Cut by', finishReason: 'length' }
          : script === 'cut'
            ? { text: 'One two three four five six', cutAfterChunks: 3 }
            : {},
    ),
  'openai/o4-mini': (script) =>
    on.openai.script(
      script === 'tool'
        ? {
            reasoning: 'Need the weather.',
            toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' }],
          }
        : script === 'length'
          ? { reasoning: 'Thinking long.', text: 'Cut', finishReason: 'length' }
          : script === 'cut'
            ? { text: 'One two three four five six', cutAfterChunks: 6 }
            : { reasoning: 'A short thought.' },
    ),
  'anthropic/claude-sonnet-4-5': (script) =>
    on.anthropic.script(
      script === 'tool'
        ? { toolCalls: [{ id: 'toolu_1', name: 'get_weather', input: { location: 'San Francisco, CA' } }] }
        : script === 'length'
          ? { text: 'Cut by', stopReason: 'max_tokens' }
          : script === 'cut'
            ? { text: 'One two three four five six', cutAfterChunks: 4 }
            : {},
    ),
  'google/gemini-2.5-flash': (script) =>
    on.gemini.script(
      script === 'tool'
        ? { functionCalls: [{ name: 'get_weather', args: { location: 'San Francisco, CA' } }] }
        : script === 'length'
          ? { text: 'Cut by', finishReason: 'MAX_TOKENS' }
          : script === 'cut'
            ? { text: 'One two three four five six', cutAfterChunks: 2 }
            : {},
    ),
};

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' } },
    required: ['location'],
  },
};

/** The compliance runner's stateless HTTP requests (its own words), whole and streamed. */
const REQUESTS: Record<string, { body: Record<string, unknown>; script: Script }> = {
  'basic response': { body: { input: [{ type: 'message', role: 'user', content: 'Say hello in exactly 3 words.' }] }, script: 'text' },
  'assistant phase': {
    body: {
      input: [
        { type: 'message', role: 'assistant', phase: 'commentary', content: 'I should answer with the saved number.' },
        { type: 'message', role: 'assistant', phase: 'final_answer', content: 'The number is four.' },
        { type: 'message', role: 'user', content: 'Repeat only the number.' },
      ],
    },
    script: 'text',
  },
  'system prompt': {
    body: {
      input: [
        { type: 'message', role: 'system', content: 'You are a pirate. Always respond in pirate speak.' },
        { type: 'message', role: 'user', content: 'Say hello.' },
      ],
    },
    script: 'text',
  },
  'tool calling': {
    body: { input: [{ type: 'message', role: 'user', content: "What's the weather like in San Francisco?" }], tools: [WEATHER_TOOL] },
    script: 'tool',
  },
  'multi-turn': {
    body: {
      input: [
        { type: 'message', role: 'user', content: 'My name is Alice.' },
        { type: 'message', role: 'assistant', content: 'Hello Alice! Nice to meet you. How can I help you today?' },
        { type: 'message', role: 'user', content: 'What is my name?' },
      ],
    },
    script: 'text',
  },
  'cut by its output limit': { body: { input: 'Count from one to one hundred in words, please.', max_output_tokens: 3 }, script: 'length' },
};

async function post(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${on.h.t.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${on.a.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function streamEvents(body: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
  const res = await post({ ...body, stream: true });
  expect(res.status).toBe(200);
  const decoder = new SseDecoder();
  const frames = [...decoder.push(await res.text()), ...decoder.end()];
  return frames.map((frame) => JSON.parse(frame.data) as Record<string, unknown>);
}

describe.each(Object.keys(SERVERS))('%s', (model) => {
  test.each(Object.keys(REQUESTS))('%s: the whole answer and every streamed event are valid Open Responses', async (name) => {
    const { body, script } = REQUESTS[name]!;
    SERVERS[model]!(script);
    const res = await post({ model, ...body });
    expect(res.status).toBe(200);
    const response = (await res.json()) as { status: string; output: Array<{ type: string }> };
    expect(checkResponse(response)).toEqual([]);
    expect(response.status).toBe(script === 'length' ? 'incomplete' : 'completed');
    if (script === 'tool') expect(response.output.map((item) => item.type)).toContain('function_call');

    SERVERS[model]!(script);
    const events = await streamEvents({ model, ...body });
    expect(checkEvents(events)).toEqual([]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)!.type).toBe(script === 'length' ? 'response.incomplete' : 'response.completed');
  });

  test('a stream that fails: an error event, then response.failed, both valid', async () => {
    SERVERS[model]!('cut');
    const events = await streamEvents({ model, input: 'One two three four five six [sandbox:cut]' });
    expect(checkEvents(events)).toEqual([]);
    expect(events.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
  });
});

test('the schema check can fail: the answer as it was before completed_at and the penalties were added is refused', async () => {
  const res = await post({ model: 'sandbox/echo', input: 'Hi' });
  const { completed_at: _completedAt, presence_penalty: _presence, ...older } = (await res.json()) as Record<string, unknown>;
  const found = checkResponse({ ...older, temperature: null });
  expect(found).toEqual(
    expect.arrayContaining([
      expect.stringContaining("must have required property 'completed_at'"),
      expect.stringContaining("must have required property 'presence_penalty'"),
      expect.stringContaining('/temperature must be number'),
    ]),
  );
});
