import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { countTokens } from 'gpt-tokenizer';
import {
  eventually,
  expectConsistent,
  expectedCharge,
  expectNothingCharged,
  requestId,
  settledMoneyOf,
  startTextHarness,
  textAccount,
  withId,
  type TextAccount,
  type TextHarness,
} from '../support/text';

/**
 * Vendors that misbehave below the HTTP status line: garbage JSON, answers of the wrong
 * shape, SSE payloads that are not JSON, streams truncated mid-line, connections reset before
 * and after the first byte, and streams that stall. Each gets the right error (a 502 envelope
 * before the first byte, the format's error event after it), nothing charged for what was
 * not delivered, the delivered part charged, and no hold or slot left behind.
 *
 * The vendor here is a raw HTTP server whose behaviour each test sets, serving both the
 * OpenAI (`/chat/completions`) and Anthropic (`/v1/messages`) paths.
 */

type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;
let behaviour: Behaviour = (_req, res) => res.end();
let vendor: Server;
let vendorUrl: string;
let h: TextHarness;
let a: TextAccount;

const PROMPT = 'Describe a lighthouse at night in a few sentences.';
const MODEL = 'openai/gpt-4o-mini';

function chatChunk(content: string): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
}

function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

beforeAll(async () => {
  vendor = createServer((req, res) => {
    req.resume();
    req.on('end', () => behaviour(req, res));
  });
  await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
  vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
  h = await startTextHarness({
    OPENAI_API_KEY: 'sk-misbehaving',
    OPENAI_BASE_URL: vendorUrl,
    ANTHROPIC_API_KEY: 'sk-ant-misbehaving',
    ANTHROPIC_BASE_URL: vendorUrl,
    TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS: '1000',
    TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS: '1000',
  });
  a = await textAccount(h.t);
});
afterAll(async () => {
  await h?.stop();
  vendor?.closeAllConnections();
  await new Promise<void>((resolve) => vendor?.close(() => resolve()));
});
afterEach(async () => {
  await expectConsistent(h, a);
  expect(await eventually(async () => (await h.t.tollgate.services.admission.slotsInUse(a.accountId)) === 0)).toBe(true);
});

async function rejection(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
  );
}

/** A non-streamed Chat request that must fail with a 502 provider error and charge nothing. */
async function expect502NothingCharged(stream = false): Promise<InstanceType<typeof OpenAI.APIError>> {
  const id = requestId();
  const error = await rejection(
    a.openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: PROMPT }], stream }, withId(id)),
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  expect(error.status).toBe(502);
  expect(error.error).toMatchObject({ code: 'provider_error', details: { vendor: 'openai' } });
  await expectNothingCharged(h, a, id);
  return error;
}

/** Streams a Chat request, collecting the text delivered before the stream's error. */
async function streamUntilError(id: string): Promise<{ delivered: string; error: unknown }> {
  const stream = await a.openai.chat.completions.create(
    { model: MODEL, messages: [{ role: 'user', content: PROMPT }], stream: true },
    withId(id),
  );
  let delivered = '';
  try {
    for await (const chunk of stream) delivered += chunk.choices[0]?.delta.content ?? '';
    return { delivered, error: null };
  } catch (error) {
    return { delivered, error };
  }
}

/** The cut stream was charged the prompt and exactly the output the client received. */
async function expectPartialCharge(id: string, delivered: string): Promise<void> {
  const money = await settledMoneyOf(h.db, id);
  const expected = expectedCharge(MODEL, { inputTokens: countTokens(PROMPT), cachedInputTokens: 0, outputTokens: countTokens(delivered) });
  expect(money.usage).toHaveLength(1);
  expect(money.usage[0]).toMatchObject({ status: 'partial', output_tokens: countTokens(delivered) });
  expect(money.charges).toEqual([-expected]);
}

describe('garbage before the first byte: 502 in the envelope, nothing charged', () => {
  test('a 200 whose body is not JSON', async () => {
    behaviour = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('<html><body>502 Bad Gateway</body></html>');
    };
    await expect502NothingCharged();
  });

  test('a 200 of truncated JSON', async () => {
    behaviour = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hel');
    };
    await expect502NothingCharged();
  });

  test('a 200 of JSON in the wrong shape', async () => {
    behaviour = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ hello: 'world', choices: 'none' }));
    };
    await expect502NothingCharged();
  });

  test('an error status with a body that is not JSON', async () => {
    behaviour = (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<h1>Service Unavailable</h1>');
    };
    const error = await expect502NothingCharged();
    expect(error.error).toMatchObject({ details: { vendor_status: 503 } });
  });

  test('the connection reset before any answer, for a plain and a streamed request', async () => {
    behaviour = (req) => req.socket.resetAndDestroy();
    await expect502NothingCharged(false);
    await expect502NothingCharged(true);
  });

  test('a stream whose first event is not JSON', async () => {
    behaviour = (_req, res) => {
      sseHead(res);
      res.end('data: {this is not json\n\n');
    };
    await expect502NothingCharged(true);
  });
});

describe('misbehaviour after the first byte: the stream ends with an error, the delivered part is charged', () => {
  const words = ['The lamp ', 'turns ', 'slowly ', 'over the ', 'dark sea.'];

  test('an SSE payload that is not JSON in the middle of the stream', async () => {
    behaviour = (_req, res) => {
      sseHead(res);
      res.write(chatChunk(words[0]!) + chatChunk(words[1]!));
      setTimeout(() => res.end('data: {"choices":[{"delta":{"content":oops}}]}\n\n'), 50);
    };
    const id = requestId();
    const { delivered, error } = await streamUntilError(id);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(delivered).toBe(words[0]! + words[1]!);
    await expectPartialCharge(id, delivered);
  });

  test('a stream truncated in the middle of a line', async () => {
    behaviour = (_req, res) => {
      sseHead(res);
      res.write(chatChunk(words[0]!) + chatChunk(words[1]!) + chatChunk(words[2]!));
      setTimeout(() => res.end('data: {"id":"chatcmpl-x","choices":[{"index":0,"delta":{"content":"ov'), 50);
    };
    const id = requestId();
    const { delivered, error } = await streamUntilError(id);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(delivered).toBe(words.slice(0, 3).join(''));
    await expectPartialCharge(id, delivered);
  });

  test('the connection reset after some chunks', async () => {
    behaviour = (req, res) => {
      sseHead(res);
      res.write(chatChunk(words[0]!) + chatChunk(words[1]!));
      setTimeout(() => req.socket.resetAndDestroy(), 100);
    };
    const id = requestId();
    const { delivered, error } = await streamUntilError(id);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(delivered).toBe(words[0]! + words[1]!);
    await expectPartialCharge(id, delivered);
  });

  test('a stream that stalls after some chunks is ended by the idle timeout', async () => {
    let stalled: ServerResponse | undefined;
    behaviour = (_req, res) => {
      stalled = res;
      sseHead(res);
      res.write(chatChunk(words[0]!));
    };
    const id = requestId();
    const { delivered, error } = await streamUntilError(id);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(/sent nothing for 1 s/);
    expect(delivered).toBe(words[0]);
    await expectPartialCharge(id, delivered);
    // The vendor call was abandoned: its socket is closed by the gateway.
    expect(await eventually(() => stalled!.destroyed || stalled!.socket === null || stalled!.socket.destroyed)).toBe(true);
  });

  test('an Anthropic stream that is not JSON mid-way, through the Messages format', async () => {
    behaviour = (_req, res) => {
      sseHead(res);
      const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
      res.write(
        event('message_start', {
          type: 'message_start',
          message: {
            id: 'msg_x',
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet-4-5',
            content: [],
            stop_reason: null,
            usage: { input_tokens: 12, output_tokens: 1 },
          },
        }) +
          event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
          event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Waves ' } }),
      );
      setTimeout(() => res.end('event: content_block_delta\ndata: {garbage\n\n'), 50);
    };
    const id = requestId();
    const stream = a.anthropic.messages.stream(
      { model: 'anthropic/claude-sonnet-4-5', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] },
      withId(id),
    );
    let delivered = '';
    stream.on('text', (text) => (delivered += text));
    await expect(stream.done()).rejects.toThrow();
    expect(delivered).toBe('Waves ');
    const money = await settledMoneyOf(h.db, id);
    expect(money.usage).toHaveLength(1);
    expect(money.usage[0]!.status).toBe('partial');
    expect(money.charges).toHaveLength(1);
  });
});

describe('an image vendor that misbehaves: 502, nothing charged, the hold released', () => {
  const generate = async () => {
    const id = requestId();
    const error = await rejection(
      a.openai.images.generate({ model: 'openai/gpt-image-1', prompt: 'a lighthouse', n: 2, size: '1024x1024' }, withId(id)),
    );
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ code: 'provider_error' });
    const money = await settledMoneyOf(h.db, id);
    expect(money.charges).toEqual([]);
  };

  test('garbage JSON', async () => {
    behaviour = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data":[{"b64_json":');
    };
    await generate();
  });

  test('base64 that is not an image', async () => {
    behaviour = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ created: 1, data: [{ b64_json: Buffer.from('not an image at all').toString('base64') }] }));
    };
    await generate();
  });

  test('the connection reset', async () => {
    behaviour = (req) => req.socket.resetAndDestroy();
    await generate();
  });
});

test('after every misbehaviour a well-formed answer is served and charged (no state left behind)', async () => {
  behaviour = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-ok',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Fine.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      }),
    );
  };
  const id = requestId();
  const answer = await a.openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: PROMPT }] }, withId(id));
  expect(answer.choices[0]!.message.content).toBe('Fine.');
  const money = await settledMoneyOf(h.db, id);
  expect(money.charges).toEqual([-expectedCharge(MODEL, { inputTokens: 10, cachedInputTokens: 0, outputTokens: 2 })]);
});
