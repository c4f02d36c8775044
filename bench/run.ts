/**
 * `npm run bench`: load on chat completions (non-streaming and streaming) through Tollgate and
 * directly against the fake upstream, in one run, on this machine. Reports requests/s, p50 and
 * p99 latency, the latency Tollgate adds, its CPU time per request and its peak memory.
 * Billing (reservation + settlement on PostgreSQL) and admission limits are on, as in production.
 * Reported, never asserted.
 *
 * DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres;
 * a scratch database is created and dropped). BENCH_SECONDS (default 8) per scenario,
 * BENCH_CONNECTIONS (default "1,16,64") the concurrency levels. With REDIS_URL set, the
 * gateway keeps its limits in Redis.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,16,64').split(',').map(Number);
const ADMIN_TOKEN = 'bench-operator-token-0123456789';
const REGISTER = join(__dirname, '..', 'test', 'support', 'swc-register.js');
const CLOCK_TICKS_PER_SECOND = 100;

function spawnChild<T>(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; message: T }> {
  const child = fork(join(__dirname, script), [], { execArgv: ['-r', REGISTER, ...(script === 'gateway-process.ts' && process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : [])], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve({ child, message: message as T }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/** CPU time (user + system) a process has used, in ms, from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

async function json(url: string, body: unknown, token?: string): Promise<any> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
  return response.json();
}

async function provisionKey(gateway: string): Promise<string> {
  const gql = (query: string, variables: Record<string, unknown>) => json(`${gateway}/graphql`, { query, variables }, ADMIN_TOKEN);
  const account = await gql('mutation{createAccount(input:{name:"bench"}){id}}', {});
  const accountId = account.data.createAccount.id;
  await gql('mutation($a:ID!){addFunds(input:{accountId:$a,amountMicro:"900000000000"}){id}}', { a: accountId });
  await gql('mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: accountId });
  await gql('mutation($a:ID!){createUser(input:{accountId:$a,email:"bench@example.com",password:"bench-password"}){id}}', { a: accountId });
  const session = await json(`${gateway}/v1/auth/sessions`, { email: 'bench@example.com', password: 'bench-password' });
  const key = await json(`${gateway}/v1/keys`, { name: 'bench' }, session.token);
  return key.secret;
}

interface Result {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
}

async function load(url: string, token: string, body: unknown, connections: number): Promise<Result> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections,
    duration: SECONDS,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    requests: result.requests.total,
  };
}

async function main(): Promise<void> {
  const dbName = `tollgate_bench_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: SERVER_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(SERVER_URL);
  dbUrl.pathname = `/${dbName}`;

  const upstream = await spawnChild<{ url: string }>('upstream-process.ts', {});
  const gateway = await spawnChild<{ port: number }>('gateway-process.ts', {
    DATABASE_URL: dbUrl.toString(),
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: upstream.message.url,
    TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
  });
  const gatewayUrl = `http://127.0.0.1:${gateway.message.port}`;
  try {
    const key = await provisionKey(gatewayUrl);
    const messages = [{ role: 'user', content: 'Say something about foxes.' }];
    const rows: string[] = [];
    console.log(`Tollgate bench: ${SECONDS}s per scenario, connections ${CONNECTIONS.join('/')}, billing + limits on`);
    for (const stream of [false, true]) {
      const extra = stream ? { stream: true, stream_options: { include_usage: true } } : {};
      for (const connections of CONNECTIONS) {
        const direct = await load(`${upstream.message.url}/chat/completions`, 'sk-bench', { model: 'gpt-4o-mini', messages, ...extra }, connections);
        const cpuBefore = cpuMs(gateway.child.pid!);
        const through = await load(`${gatewayUrl}/v1/chat/completions`, key, { model: 'openai/gpt-4o-mini', messages, ...extra }, connections);
        const cpuPerRequest = (cpuMs(gateway.child.pid!) - cpuBefore) / Math.max(1, through.requests);
        rows.push(
          [
            stream ? 'stream' : 'json  ',
            String(connections).padStart(3),
            `direct ${direct.requestsPerSecond.toFixed(0).padStart(6)} req/s p50 ${direct.p50.toFixed(2).padStart(7)} ms p99 ${direct.p99.toFixed(2).padStart(7)} ms`,
            `tollgate ${through.requestsPerSecond.toFixed(0).padStart(6)} req/s p50 ${through.p50.toFixed(2).padStart(7)} ms p99 ${through.p99.toFixed(2).padStart(7)} ms`,
            `added p50 ${(through.p50 - direct.p50).toFixed(2).padStart(6)} ms p99 ${(through.p99 - direct.p99).toFixed(2).padStart(6)} ms`,
            `cpu ${cpuPerRequest.toFixed(3)} ms/req`,
            `errors ${through.errors}/${direct.errors}`,
          ].join(' | '),
        );
        console.log(rows.at(-1));
      }
    }
    console.log(`tollgate peak RSS ${peakRssMb(gateway.child.pid!).toFixed(0)} MB`);
  } finally {
    gateway.child.disconnect();
    upstream.child.disconnect();
    await new Promise((r) => setTimeout(r, 2500));
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
