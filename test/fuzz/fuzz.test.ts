import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { ADMIN_TOKEN, createKey, graphql, provisionAccount, startTestTollgate, type TestTollgate } from '../support/tollgate';
import { ENDPOINTS, fuzzRequest, type Credential, type FuzzRequest } from './requests';

/**
 * Hostile input over every endpoint: a property-based run of malformed requests. `npm test`
 * runs FUZZ_RUNS (default 1,500); `npm run test:fuzz` runs 10,000 and more. Properties:
 * no 5xx, every REST refusal in the envelope, every request answered, nothing charged for a
 * refusal, no hold left, memory back near its level after the run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1_500);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const ANSWER_TIMEOUT_MS = 10_000;

let t: TestTollgate;
let owner: Awaited<ReturnType<typeof provisionAccount>>;
let apiKey: string;

beforeAll(async () => {
  t = await startTestTollgate({
    env: {
      TOLLGATE_MAX_BODY_BYTES: String(256 * 1024),
      TOLLGATE_SANDBOX_VIDEO_RENDER_MS: '20',
      TOLLGATE_VIDEO_POLL_INITIAL_MS: '20',
      TOLLGATE_MAX_UPLOAD_TOTAL_BYTES: String(1024 * 1024),
    },
  });
  owner = await provisionAccount(t.url, { fundsMicro: '100000000' });
  await graphql(t.url, 'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: owner.accountId }, ADMIN_TOKEN);
  apiKey = (await createKey(t.url, owner.sessionToken)).secret;
}, 60_000);
afterAll(async () => t?.stop());

const CHARGED_PATHS = new Set(ENDPOINTS.filter((e) => e.charged).map((e) => e.path));
/** The route a path reaches, as the text endpoints match it (case-insensitive, one trailing slash, no query). */
const routeOf = (path: string) =>
  path
    .split(/[?#]/)[0]!
    .toLowerCase()
    .replace(/(.)\/$/, '$1');

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

function tokenFor(credential: Credential): string | null {
  if (credential === 'key') return apiKey;
  if (credential === 'session') return owner.sessionToken;
  if (credential === 'operator') return ADMIN_TOKEN;
  if (credential === 'garbage') return 'tgk_' + 'A'.repeat(44);
  return null;
}

/** Sends one request on its own connection; resolves 'unsendable' when node's client refuses to write it. */
function send(request: FuzzRequest): Promise<Answer | 'unsendable' | 'no answer'> {
  const url = new URL(t.url);
  // Keep-alive, as SDK clients send: node then reads and discards a body the route did not need.
  // (With Connection: close it closes at once, and a client still sending a large body gets a
  // reset instead of the answer: a known limit of answering before the body is read.)
  const headers: Record<string, string | string[]> = { connection: 'keep-alive', ...request.headers };
  const token = tokenFor(request.credential);
  if (token && headers.authorization === undefined) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve) => {
    let responded = false;
    let req;
    try {
      req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: request.method,
          path: request.path,
          headers,
          agent: false,
          timeout: ANSWER_TIMEOUT_MS,
        },
        (res) => {
          responded = true;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              contentType: String(res.headers['content-type'] ?? ''),
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', () => resolve('no answer'));
        },
      );
    } catch {
      resolve('unsendable'); // an invalid method, path or header value: node's client will not write it
      return;
    }
    req.on('timeout', () => {
      req.destroy();
      resolve('no answer');
    });
    // A server may answer before reading a body it does not need and close: the write then
    // fails (EPIPE) while the answer is already arriving. That request was answered.
    req.on(
      'error',
      (error: NodeJS.ErrnoException) =>
        responded || resolve(error.code === 'ERR_INVALID_CHAR' || error.code === 'ERR_UNESCAPED_CHARACTERS' ? 'unsendable' : 'no answer'),
    );
    req.end(request.body ?? undefined);
  });
}

/** A REST refusal is `{error: {code, message, details}}`; GraphQL answers in its own format. */
function isEnvelope(answer: Answer): boolean {
  try {
    const parsed = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown; details?: unknown }; errors?: unknown };
    if (parsed.error)
      return typeof parsed.error.code === 'string' && typeof parsed.error.message === 'string' && typeof parsed.error.details === 'object';
    return Array.isArray(parsed.errors);
  } catch {
    return false;
  }
}

test(
  `${RUNS} malformed requests over every endpoint: no 5xx, every refusal in the envelope, nothing charged, nothing left`,
  async () => {
    const heapBefore = settledHeap();
    const counts = { sent: 0, unsendable: 0, byStatus: new Map<number, number>(), chargedAnswers: 0 };
    await fc.assert(
      fc.asyncProperty(fuzzRequest(), async (request) => {
        const answer = await send(request);
        if (answer === 'unsendable') {
          counts.unsendable++;
          return;
        }
        counts.sent++;
        if (answer === 'no answer') throw new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`);
        counts.byStatus.set(answer.status, (counts.byStatus.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500) throw new Error(`${answer.status}: ${answer.body.slice(0, 300)}`);
        if (answer.status >= 400 && request.method !== 'HEAD' && !isEnvelope(answer))
          throw new Error(`refusal outside the envelope (${answer.status}): ${answer.body.slice(0, 300)}`);
        if (answer.status < 300 && request.method === 'POST' && CHARGED_PATHS.has(routeOf(request.path))) counts.chargedAnswers++;
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: false, verbose: 1 },
    );

    // Leases are given back after a second idle; after-answer settlements commit within moments;
    // sandbox video jobs complete within a few queue polls: wait (bounded) until no job runs and nothing is reserved.
    const services = t.tollgate.services;
    const running = async () =>
      (
        (await services.orm.em
          .fork()
          .execute(
            "select count(*)::int as n from videos where account_id = ? and status in ('queued', 'in_progress')",
            [owner.accountId],
            'all',
          )) as { n: number }[]
      )[0]!.n;
    let audit = await services.billing.auditAccount(owner.accountId);
    for (const deadline = Date.now() + 30_000; ((await running()) > 0 || audit.reservedMicro !== 0n) && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 100));
      audit = await services.billing.auditAccount(owner.accountId);
    }
    const [row] = (await services.orm.em
      .fork()
      .execute(
        "select count(*)::int as n from usage_records where account_id = ? and status in ('ok', 'partial')",
        [owner.accountId],
        'all',
      )) as { n: number }[];
    const charged = row!.n;
    const heapAfter = settledHeap();
    const report = {
      runs: RUNS,
      sent: counts.sent,
      unsendable_by_node_client: counts.unsendable,
      answers_by_status: Object.fromEntries([...counts.byStatus].sort(([a], [b]) => a - b)),
      answered_5xx: [...counts.byStatus].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0),
      charged_answers: counts.chargedAnswers,
      usage_records_charged: charged,
      reserved_micro_after: audit.reservedMicro.toString(),
      balance_equals_ledger: audit.balanceMicro === audit.ledgerSumMicro,
      heap_mb_before: heapBefore === null ? 'run with --expose-gc' : Math.round(heapBefore / 1e6),
      heap_mb_after: heapAfter === null ? 'run with --expose-gc' : Math.round(heapAfter / 1e6),
    };
    process.stdout.write(`fuzz report: ${JSON.stringify(report, null, 2)}\n`);
    expect(audit.consistent).toBe(true);
    expect(audit.reservedMicro).toBe(0n);
    // Every charge is a successful model-taking answer: no refusal was charged.
    expect(charged).toBe(counts.chargedAnswers);
    if (heapBefore !== null && heapAfter !== null) expect(heapAfter - heapBefore).toBeLessThan(64 * 1024 * 1024);
  },
  Math.max(120_000, RUNS * 100),
);

/** Heap in use after full collections, when the run has --expose-gc; null otherwise. */
function settledHeap(): number | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return null;
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}
