import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type {
  HeldSlotRef,
  LimitName,
  LimitStore,
  RequestAdmission,
  SettledUsage,
  StoreOutcome,
  TokenReservation,
  TokenSettlement,
} from '../domain/limits/store';
import { MINUTE_WINDOW_MS, SECOND_WINDOW_MS, type WindowSnapshot } from '../domain/limits/windows';

/**
 * Limits shared by every instance through one Redis. rate-limiter-flexible's fixed windows
 * do not give rolling windows, so these are our own structures, five keys per subject (one
 * hash tag per subject, so a Redis Cluster keeps them on one shard):
 *   …:req      sorted set, member = request id, score = admitted at      (RPS and RPM log)
 *   …:slots    sorted set, member = slot id,    score = slot expires at  (concurrency)
 *   …:slottok  hash, slot id → tokens reserved in flight                 (dies with its slot)
 *   …:tok      sorted set, member = "<id>|<tokens>", score = settled at  (TPM log)
 *   …:toksum   string, the running sum of …:tok, so no request sums the whole log
 * Each operation is one Lua script: check and record happen atomically across instances.
 * Every key carries a TTL, so an idle account leaves nothing behind, and slots of a crashed
 * instance stop counting when their expiry passes (holders refresh them, see AdmissionService).
 */

const PRELUDE = `
local MINUTE, SECOND = ${MINUTE_WINDOW_MS}, ${SECOND_WINDOW_MS}
local now = tonumber(ARGV[1])

-- Commands over long lists in chunks: unpack() of thousands of values overflows Lua's stack.
local function chunked(command, key, list)
  for i = 1, #list, 500 do redis.call(command, key, unpack(list, i, math.min(i + 499, #list))) end
end

local function pruneSlots()
  local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
  if #expired > 0 then
    chunked('ZREM', KEYS[2], expired)
    chunked('HDEL', KEYS[3], expired)
  end
end

local function trimSettled()
  local cutoff = now - MINUTE
  local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', cutoff)
  if #gone > 0 then
    local freed = 0
    for _, member in ipairs(gone) do freed = freed + tonumber(string.match(member, '|(%d+)$')) end
    redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', cutoff)
    if redis.call('ZCARD', KEYS[4]) == 0 then redis.call('DEL', KEYS[5]) else redis.call('DECRBY', KEYS[5], freed) end
  end
end

local function prune()
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - MINUTE)
  pruneSlots()
  trimSettled()
end

local function inFlight()
  local sum = 0
  for _, v in ipairs(redis.call('HVALS', KEYS[3])) do sum = sum + tonumber(v) end
  return sum
end

local function oldestScore(key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then return tonumber(first[2]) end
  return -1
end

-- requestsInMinute, oldestRequestAt, settledTokens, oldestSettledAt, inFlightTokens, slotsInUse
local function snapshot()
  return { redis.call('ZCARD', KEYS[1]), oldestScore(KEYS[1]), tonumber(redis.call('GET', KEYS[5]) or '0'),
    oldestScore(KEYS[4]), inFlight(), redis.call('ZCARD', KEYS[2]) }
end

local function keepSlotKeys(expiresAt)
  local ttl = math.max(expiresAt - now, 0) + MINUTE
  redis.call('PEXPIRE', KEYS[2], ttl)
  if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ttl) end
end

-- A slot's settled usage in the token window: its log entry and the running sum, kept a minute.
local function recordSettled(slotId, tokens, at)
  if tokens <= 0 then return end
  redis.call('ZADD', KEYS[4], at, slotId .. '|' .. tokens)
  redis.call('INCRBY', KEYS[5], tokens)
  redis.call('PEXPIRE', KEYS[4], MINUTE + SECOND)
  redis.call('PEXPIRE', KEYS[5], MINUTE + SECOND)
end

-- How long until that many more tokens fit the token window (-1: they fit now). An estimate above the
-- whole limit needs the whole (empty) window, not forever. Waits until enough settled usage has
-- left, oldest first (paged: refusals stop early).
local function tokenWait(tokens, tpm)
  local remaining = tpm - tonumber(redis.call('GET', KEYS[5]) or '0') - inFlight()
  local required = math.min(tokens, tpm)
  if required <= remaining then return -1 end
  local needed, freed, offset = required - remaining, 0, 0
  while true do
    local page = redis.call('ZRANGE', KEYS[4], offset, offset + 127, 'WITHSCORES')
    if #page == 0 then return MINUTE end
    for i = 1, #page, 2 do
      freed = freed + tonumber(string.match(page[i], '|(%d+)$'))
      if freed >= needed then return math.max(tonumber(page[i + 1]) + MINUTE - now, 0) end
    end
    offset = offset + 128
  end
end

local function reply(admitted, limit, retryMs)
  local s = snapshot()
  return { admitted, limit, retryMs, s[1], s[2], s[3], s[4], s[5], s[6] }
end
`;

/**
 * ARGV: now, requestId ('' = record none), rps (-1 = none), rpm (-1 = none), slotId ('' = none),
 * slotLimit, slotExpiresAt, tokens to reserve on the slot (0 = none), tokens per minute.
 */
const ADMIT = `${PRELUDE}
local requestId, rps, rpm = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local slotId, slotLimit, slotExpiresAt = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
local tokens, tpm = tonumber(ARGV[8]), tonumber(ARGV[9])
prune()
local refused, wait = '', -1
local function consider(limit, ms) if ms > wait then refused, wait = limit, ms end end
if requestId ~= '' then
  if rps >= 0 then
    local inSecond = redis.call('ZCOUNT', KEYS[1], '(' .. (now - SECOND), '+inf')
    if inSecond >= rps then
      -- Admission needs inSecond - rps + 1 entries gone: wait for the (inSecond - rps)-th of the second.
      local e = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - SECOND), '+inf', 'WITHSCORES', 'LIMIT', inSecond - rps, 1)
      consider('requests_per_second', e[2] and (tonumber(e[2]) + SECOND - now) or SECOND)
    end
  end
  if rpm >= 0 then
    local inMinute = redis.call('ZCARD', KEYS[1])
    if inMinute >= rpm then
      local e = redis.call('ZRANGE', KEYS[1], inMinute - rpm, inMinute - rpm, 'WITHSCORES')
      consider('requests_per_minute', e[2] and (tonumber(e[2]) + MINUTE - now) or MINUTE)
    end
  end
end
local alreadyHeld = slotId ~= '' and redis.call('ZSCORE', KEYS[2], slotId) ~= false
if slotId ~= '' and not alreadyHeld and redis.call('ZCARD', KEYS[2]) >= slotLimit then
  consider('concurrent_requests', SECOND)
end
if slotId ~= '' and tokens > 0 then
  local tokensWait = tokenWait(tokens, tpm)
  if tokensWait >= 0 then consider('tokens_per_minute', tokensWait) end
end
if refused ~= '' then return reply(0, refused, wait) end
if requestId ~= '' then
  redis.call('ZADD', KEYS[1], now, requestId)
  redis.call('PEXPIRE', KEYS[1], MINUTE + SECOND)
end
if slotId ~= '' then
  redis.call('ZADD', KEYS[2], 'GT', slotExpiresAt, slotId)
  if tokens > 0 then redis.call('HINCRBY', KEYS[3], slotId, tokens) end
  keepSlotKeys(slotExpiresAt)
end
return reply(1, '', 0)
`;

/** ARGV: now, slotId, tokens, tokensPerMinute, slotExpiresAt. */
const RESERVE = `${PRELUDE}
local slotId, tokens, tpm, slotExpiresAt = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
prune()
if tokens > 0 then
  local wait = tokenWait(tokens, tpm)
  if wait >= 0 then return reply(0, 'tokens_per_minute', wait) end
end
-- Re-take a slot that expired while held (a stalled heartbeat): it is in use.
if redis.call('ZSCORE', KEYS[2], slotId) == false then redis.call('ZADD', KEYS[2], slotExpiresAt, slotId) end
if tokens > 0 then redis.call('HINCRBY', KEYS[3], slotId, tokens) end
keepSlotKeys(slotExpiresAt)
return reply(1, '', 0)
`;

/** ARGV: now, slotId, tokens. */
const SETTLE = `${PRELUDE}
local slotId, tokens = ARGV[2], tonumber(ARGV[3])
redis.call('HDEL', KEYS[3], slotId)
prune()
recordSettled(slotId, tokens, now)
return reply(1, '', 0)
`;

/** ARGV: now. */
const SNAPSHOT = `${PRELUDE}
prune()
return reply(1, '', 0)
`;

/**
 * ARGV: now (unused), slotId, settled tokens (0: none), settled at. A settlement recorded here
 * rather than by SETTLE needs no pruning: entries are trimmed, and the sum with them, whenever
 * a later script prunes.
 */
const RELEASE = `${PRELUDE}
local slotId, tokens, settledAt = ARGV[2], tonumber(ARGV[3]), ARGV[4]
redis.call('ZREM', KEYS[2], slotId)
redis.call('HDEL', KEYS[3], slotId)
recordSettled(slotId, tokens, settledAt)
return 1
`;

class LuaScript {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

const SCRIPTS = {
  admit: new LuaScript(ADMIT),
  reserve: new LuaScript(RESERVE),
  settle: new LuaScript(SETTLE),
  snapshot: new LuaScript(SNAPSHOT),
  release: new LuaScript(RELEASE),
};

type ScriptReply = [number, string, number, number, number, number, number, number, number];

const KEY_PREFIX = /^[A-Za-z0-9:._-]{1,100}$/;

export interface RedisLimitStoreOptions {
  /** Starts every key, e.g. `tollgate:` (default) or `tollgate:test-<run>:`. */
  keyPrefix?: string;
  /** Close the connection with the store (it was made for it); otherwise the caller owns it. */
  quitOnClose?: boolean;
}

/**
 * How long a release may wait for another script call to travel with. A release is not on any
 * request's latency path (it is sent once the answer is out), and until it lands the slot and
 * its reservation count a few milliseconds longer, on the safe side: so releases wait for the
 * next admission (or each other) and share its write and round trip, rather than cost their own.
 */
export const RELEASE_BATCH_MS = 5;

interface QueuedRelease {
  subject: string;
  args: (string | number)[];
  resolve(): void;
  reject(error: unknown): void;
}

export class RedisLimitStore implements LimitStore {
  private readonly keyPrefix: string;
  private readonly quitOnClose: boolean;
  private queuedReleases: QueuedRelease[] = [];
  private releaseTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: Redis,
    options: RedisLimitStoreOptions = {},
  ) {
    this.quitOnClose = options.quitOnClose ?? false;
    this.keyPrefix = options.keyPrefix ?? 'tollgate:';
    if (!KEY_PREFIX.test(this.keyPrefix)) throw new Error(`Redis key prefix '${this.keyPrefix}' must be 1 to 100 of A-Z a-z 0-9 : . _ -`);
  }

  /** The five keys of a subject, in the order the scripts expect. */
  private keys(subject: string): string[] {
    const base = `${this.keyPrefix}limits:{${subject}}:`;
    return [`${base}req`, `${base}slots`, `${base}slottok`, `${base}tok`, `${base}toksum`];
  }

  /**
   * EVALSHA, loading the script on the first NOSCRIPT (a restarted or new Redis). Queued
   * releases go first, in the same tick: the client's auto-pipelining sends them in the same
   * write, and Redis runs them before this call, so it sees the slots they free.
   */
  private async run(script: LuaScript, subject: string, args: (string | number)[]): Promise<unknown> {
    this.flushReleases();
    const keys = this.keys(subject);
    try {
      return await this.redis.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      return this.redis.eval(script.source, keys.length, ...keys, ...args);
    }
  }

  private async outcome(script: LuaScript, subject: string, now: number, args: (string | number)[]): Promise<StoreOutcome> {
    const r = (await this.run(script, subject, [now, ...args])) as ScriptReply;
    const snapshot: WindowSnapshot = {
      at: now,
      requestsInMinute: Number(r[3]),
      oldestRequestAt: Number(r[4]) < 0 ? null : Number(r[4]),
      settledTokens: Number(r[5]),
      oldestSettledAt: Number(r[6]) < 0 ? null : Number(r[6]),
      inFlightTokens: Number(r[7]),
      slotsInUse: Number(r[8]),
    };
    const refusal = Number(r[0]) === 1 ? null : { limit: r[1] as LimitName, retryAfterMs: Math.max(0, Number(r[2])) };
    return { refusal, snapshot };
  }

  admit(input: RequestAdmission): Promise<StoreOutcome> {
    return this.outcome(SCRIPTS.admit, input.subject, input.now, [
      input.requestId ?? '',
      input.requestsPerSecond ?? -1,
      input.requestsPerMinute ?? -1,
      input.slot?.id ?? '',
      input.slot?.limit ?? -1,
      input.slot?.expiresAt ?? 0,
      input.tokens?.count ?? 0,
      input.tokens?.perMinute ?? -1,
    ]);
  }

  reserveTokens(input: TokenReservation): Promise<StoreOutcome> {
    return this.outcome(SCRIPTS.reserve, input.subject, input.now, [
      input.slotId,
      input.tokens,
      input.tokensPerMinute,
      input.slotExpiresAt,
    ]);
  }

  async settleTokens(input: TokenSettlement): Promise<WindowSnapshot> {
    return (await this.outcome(SCRIPTS.settle, input.subject, input.now, [input.slotId, input.tokens])).snapshot;
  }

  async snapshot(subject: string, now: number): Promise<WindowSnapshot> {
    return (await this.outcome(SCRIPTS.snapshot, subject, now, [])).snapshot;
  }

  /** Resolves once Redis has run the release, which waits for the next call to travel with (RELEASE_BATCH_MS at most). */
  releaseSlot(subject: string, slotId: string, settled?: SettledUsage): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queuedReleases.push({ subject, args: [0, slotId, settled?.tokens ?? 0, settled?.at ?? 0], resolve, reject });
      this.releaseTimer ??= setTimeout(() => this.flushReleases(), RELEASE_BATCH_MS);
    });
  }

  private flushReleases(): void {
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    this.releaseTimer = null;
    if (this.queuedReleases.length === 0) return;
    const releases = this.queuedReleases;
    this.queuedReleases = [];
    for (const release of releases) this.run(SCRIPTS.release, release.subject, release.args).then(() => release.resolve(), release.reject);
  }

  async refreshSlots(slots: readonly HeldSlotRef[], now: number, expiresAt: number): Promise<void> {
    if (slots.length === 0) return;
    this.flushReleases();
    const ttl = Math.max(0, expiresAt - now) + MINUTE_WINDOW_MS;
    const pipeline = this.redis.pipeline();
    for (const ref of slots) {
      const [, slotsKey, slotTokensKey] = this.keys(ref.subject);
      // XX: a slot released (or expired) meanwhile is not brought back by a late heartbeat.
      pipeline.zadd(slotsKey, 'XX', 'GT', expiresAt, ref.slotId);
      pipeline.pexpire(slotsKey, ttl);
      pipeline.pexpire(slotTokensKey, ttl);
    }
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed) throw failed[0];
  }

  async close(): Promise<void> {
    this.flushReleases();
    if (!this.quitOnClose) return;
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}
