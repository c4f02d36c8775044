import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { RedisSharedAffinity } from '../../src/infra/redis-affinity';
import { capturedLog, catalogTextModel, writeCatalogFile, type CatalogFile } from '../support/routing';
import { openaiClient, requestId, textAccount, type TextAccount } from '../support/text';
import { startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * Two Tollgate instances on one PostgreSQL and one Redis share prompt-cache affinity: a
 * conversation whose turn one instance served on a deployment goes to that deployment on the
 * other instance too, though the other, left to itself, would pick another (the first priority).
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `tollgate:test-affinity-${randomBytes(4).toString('hex')}:`;
const STICKY_TTL_MS = 60_000;
const MODEL = 'acme/gpt-sticky-shared';

let east: FakeVendor<FakeOpenAIReply>;
let west: FakeVendor<FakeOpenAIReply>;
let one: TestTollgate;
let two: TestTollgate;
let account: TextAccount;
let catalog: CatalogFile;

beforeAll(async () => {
  [east, west] = await Promise.all([startFakeOpenAI({ apiKey: 'sk-east' }), startFakeOpenAI({ apiKey: 'sk-west' })]);
  catalog = writeCatalogFile({
    vendors: { openai_east: { protocol: 'openai', base_url: east.url }, openai_west: { protocol: 'openai', base_url: west.url } },
    models: [
      catalogTextModel(MODEL, 'openai_east', {
        pricing: { input: '1.00', output: '2.00' },
        deployments: [
          { vendor: 'openai_east', priority: 0 },
          { vendor: 'openai_west', priority: 1 },
        ],
      }),
    ],
  });
  const env = {
    TOLLGATE_CATALOG: catalog.path,
    OPENAI_EAST_API_KEY: 'sk-east',
    OPENAI_WEST_API_KEY: 'sk-west',
    REDIS_URL,
    TOLLGATE_REDIS_KEY_PREFIX: PREFIX,
    TOLLGATE_ROUTING_STICKY_TTL_MS: String(STICKY_TTL_MS),
    // Generous on a busy machine: this test is about sharing, not about the wait's bound.
    TOLLGATE_ROUTING_AFFINITY_WAIT_MS: '2000',
  };
  one = await startTestTollgate({ env });
  two = await startTestTollgate({ env, databaseUrl: one.databaseUrl });
  account = await textAccount(one);
});

afterAll(async () => {
  await two?.stop();
  await one?.stop();
  await Promise.all([east?.close(), west?.close()]);
  catalog?.remove();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

/** One turn on an instance; what answered it (each fake says its name). */
async function turn(instance: TestTollgate, messages: Message[], session: string | null): Promise<string> {
  const headers: Record<string, string> = { 'x-request-id': requestId() };
  if (session !== null) headers['x-session-id'] = session;
  const answer = await openaiClient(instance.url, account.secret).chat.completions.create(
    { model: MODEL, messages, max_tokens: 20 },
    { headers },
  );
  return answer.choices[0]!.message.content!;
}

/** The east fails the next request once (so instance one serves it from the west), then answers again. */
function eastFailsOnce(): void {
  east.script({ status: 503 }, { text: 'east' });
  west.script({ text: 'west' });
}

test('a conversation named by its session header, served by the west on instance one, goes to the west on instance two', async () => {
  const session = `conv-${randomBytes(4).toString('hex')}`;
  eastFailsOnce();
  expect(await turn(one, [{ role: 'user', content: 'Teach me fractions.' }], session)).toBe('west');
  // Instance two has never seen it: it asks Redis, and keeps the conversation on the west.
  for (let n = 0; n < 3; n++) expect(await turn(two, [{ role: 'user', content: `question ${n}` }], session)).toBe('west');
  // Left to itself (a conversation nobody served), instance two picks the east: the first priority, healthy.
  expect(await turn(two, [{ role: 'user', content: 'Hi' }], `other-${session}`)).toBe('east');

  // One key per conversation, living as long as the sticky TTL.
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${PREFIX}routing:affinity:*`);
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(STICKY_TTL_MS);
    }
  } finally {
    await redis.quit();
  }
});

test('a conversation named by its leading messages moves with it to the other instance', async () => {
  const system: Message = { role: 'system', content: `You are a patient tutor ${randomBytes(4).toString('hex')}.` };
  const first: Message = { role: 'user', content: 'Teach me fractions.' };
  eastFailsOnce();
  expect(await turn(one, [system, first], null)).toBe('west');
  const later: Message[] = [system, first, { role: 'assistant', content: 'Sure.' }, { role: 'user', content: 'More.' }];
  expect(await turn(two, later, null)).toBe('west');
  expect(await turn(two, [...later, { role: 'assistant', content: 'Halves.' }, { role: 'user', content: 'Next.' }], null)).toBe('west');
});

describe('Redis slow or gone: the request goes on without affinity', () => {
  test('a Redis that never answers: null after the wait, the failure logged once', async () => {
    // Accepts connections, answers nothing; the client queues its commands meanwhile (a Redis too slow to answer).
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const redis = new Redis({ port: (silent.address() as AddressInfo).port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
    redis.on('error', () => undefined);
    const { log, lines } = capturedLog();
    try {
      const affinity = new RedisSharedAffinity(redis, PREFIX, log, 50);
      expect(await affinity.recall('s:acme/m:one')).toBeNull();
      expect(await affinity.recall('s:acme/m:two')).toBeNull();
      expect(lines.filter((line) => String(line.msg).includes('conversation affinity'))).toHaveLength(1);
    } finally {
      redis.disconnect();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  test('a Redis that is down: null at once, not after the wait', async () => {
    const redis = new Redis({ port: 1, host: '127.0.0.1', enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    redis.on('error', () => undefined);
    const { log, lines } = capturedLog();
    try {
      const affinity = new RedisSharedAffinity(redis, PREFIX, log, 60_000);
      // Refused by the client (not connected, no offline queue): a 60 s wait would time the test out.
      expect(await affinity.recall('s:acme/m:one')).toBeNull();
      affinity.remember('s:acme/m:one', 'openai_west', 1_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines.filter((line) => String(line.msg).includes('conversation affinity'))).toHaveLength(1);
    } finally {
      redis.disconnect();
    }
  });
});
