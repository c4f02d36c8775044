#!/usr/bin/env node
/**
 * The real Anthropic-format clients end to end against Tollgate on the sandbox models
 * (docs/clients-anthropic.md): Claude Code (`claude -p`, a plain turn and a tool loop), the AI
 * SDK's anthropic provider, LangChain's ChatAnthropic and the Anthropic SDK. Prints a table
 * client | scenario | result; exits 1 when a scenario fails. Not part of `npm test` (it needs the
 * clients installed and Node 22 for Claude Code and the AI SDK).
 *
 *   CLIENTS_DIR=/path/with/the/clients node scripts/clients-anthropic.mjs            # starts a Tollgate
 *   CLIENTS_DIR=… node scripts/clients-anthropic.mjs --url http://host:8080 --key tgk_…  # uses one
 *   … --capture test/fixtures/clients   # also writes every request the clients sent as a fixture
 *
 * CLIENTS_DIR holds `npm install @anthropic-ai/claude-code @anthropic-ai/sdk @ai-sdk/anthropic ai
 * @langchain/anthropic @langchain/core zod` (never this repository). Starting a Tollgate needs
 * DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres): a scratch
 * database is created and dropped.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? undefined : args[i + 1];
};
const clientsDir = path.resolve(process.env.CLIENTS_DIR ?? option('clients') ?? '');
const captureDir = option('capture') ? path.resolve(option('capture')) : null;
const MODEL = option('model') ?? 'sandbox/echo';
const versionOf = (pkg) => JSON.parse(readFileSync(path.join(clientsDir, 'node_modules', pkg, 'package.json'), 'utf8')).version;

// ---------------------------------------------------------------------------------------------
// Tollgate: given, or started from this checkout on a scratch database
// ---------------------------------------------------------------------------------------------

async function startTollgate() {
  const admin = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const db = `tollgate_clients_${process.pid}`;
  const databaseUrl = Object.assign(new URL(admin), { pathname: `/${db}` }).toString();
  const psql = (sql) => execFileSync('psql', [admin, '-qc', sql], { stdio: 'ignore' });
  psql(`CREATE DATABASE ${db}`);
  const env = { ...process.env, DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' };
  const cli = (...cliArgs) => execFileSync(process.execPath, ['-r', './test/support/swc-register.js', 'src/main.ts', ...cliArgs], { cwd: repo, env, encoding: 'utf8' });
  const port = 20000 + (process.pid % 20000);
  const server = spawn(process.execPath, ['-r', './test/support/swc-register.js', 'src/main.ts', 'start'], { cwd: repo, env: { ...env, PORT: String(port) }, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const account = JSON.parse(cli('admin', 'create-account', '--name', 'clients', '--json')).id;
  cli('admin', 'add-funds', '--account', account, '--amount-usd', '100');
  cli('admin', 'set-tier', '--account', account, '--tier', '5'); // the clients' bursts stay under its rate limits
  const key = JSON.parse(cli('admin', 'create-key', '--account', account, '--name', 'clients', '--json')).secret;
  const stop = () => {
    server.kill('SIGTERM');
    return new Promise((resolve) => server.once('exit', resolve)).then(() => psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`));
  };
  return { url, key, stop };
}

// ---------------------------------------------------------------------------------------------
// A logging proxy: what each client really sends, kept as fixtures when --capture is given
// ---------------------------------------------------------------------------------------------

const SECRET_HEADERS = /^(x-api-key|authorization|cookie)$/i;
const KEPT_HEADERS = /^(anthropic-|content-type$|user-agent$|x-stainless-lang$|accept$)/i;

function scrubBody(body) {
  if (body?.metadata?.user_id !== undefined) body.metadata.user_id = 'user-scrubbed';
  return body;
}

function startProxy(target) {
  let current = null;
  const seen = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const up = http.request(new URL(req.url, target), { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (upRes) => {
        res.writeHead(upRes.statusCode, upRes.headers);
        upRes.pipe(res);
        if (current && req.method === 'POST') {
          let body = null;
          try {
            body = JSON.parse(raw.toString('utf8'));
          } catch {
            /* not JSON: not a fixture */
          }
          const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !SECRET_HEADERS.test(name) && KEPT_HEADERS.test(name)));
          seen.push({ ...current, status: upRes.statusCode, request: { method: 'POST', path: req.url, headers, body: scrubBody(body) } });
        }
      });
      up.on('error', (error) => res.destroy(error));
      up.end(raw);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}`, seen, label: (value) => (current = value), close: () => new Promise((r) => server.close(r)) }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Scenarios: each runs in its own Node process inside CLIENTS_DIR and prints one JSON line
// ---------------------------------------------------------------------------------------------

const check = `const ok = (cond, what) => { if (!cond) throw new Error('expected ' + what); };`;

const SCENARIOS = [
  {
    client: 'claude-code', pkg: '@anthropic-ai/claude-code', name: 'print', minNode: 22,
    run: { cmd: 'claude', args: ['-p', 'Say hello'], expect: /Say hello/ },
  },
  {
    client: 'claude-code', pkg: '@anthropic-ai/claude-code', name: 'tool-loop', minNode: 22,
    run: { cmd: 'claude', args: ['-p', '[sandbox:tool=Read] read the file', '--allowedTools', 'Read'], expect: /Read/ },
  },
  {
    client: 'anthropic-sdk', pkg: '@anthropic-ai/sdk', name: 'create-stream-count',
    code: `import Anthropic from '@anthropic-ai/sdk'; ${check}
      const c = new Anthropic({ apiKey: process.env.KEY, baseURL: process.env.BASE, maxRetries: 0 });
      const m = await c.messages.create({ model: process.env.MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'Hi there' }] });
      ok(m.content[0].text.includes('Hi there'), 'the echo');
      const s = c.messages.stream({ model: process.env.MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'Stream me' }] });
      let start = null; s.on('streamEvent', (e) => { if (e.type === 'message_start') start = e.message.usage.input_tokens; });
      const f = await s.finalMessage(); ok(start > 0 && f.usage.output_tokens > 0, 'input tokens in message_start');
      const n = await c.messages.countTokens({ model: process.env.MODEL, messages: [{ role: 'user', content: 'Count me' }] });
      ok(n.input_tokens > 0, 'a count');
      const e = await c.messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((err) => err);
      ok(e instanceof Anthropic.NotFoundError && e.error?.error?.type === 'not_found_error' && !e.message.startsWith('{'), 'an Anthropic error');
      console.log(JSON.stringify({ detail: 'create, stream (message_start ' + start + ' input tokens), countTokens ' + n.input_tokens + ', NotFoundError' }));`,
  },
  {
    client: 'ai-sdk-anthropic', pkg: '@ai-sdk/anthropic', name: 'generateText-streamText-tools-streamObject', minNode: 22,
    code: `import { createAnthropic } from '@ai-sdk/anthropic'; import { generateText, streamText, streamObject, tool, jsonSchema } from 'ai'; ${check}
      const anthropic = createAnthropic({ apiKey: process.env.KEY, baseURL: process.env.BASE + '/v1' });
      const model = anthropic(process.env.MODEL);
      const g = await generateText({ model, prompt: 'Hello AI SDK', maxRetries: 0 }); ok(g.text.includes('Hello AI SDK'), 'the echo');
      const weather = tool({ description: 'Weather by city', inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async ({ city }) => 'Sunny in ' + city });
      const s = streamText({ model, prompt: '[sandbox:tool=weather] weather please', tools: { weather }, maxRetries: 0 });
      let text = ''; for await (const part of s.textStream) text += part;
      const calls = (await s.toolCalls).length; ok(calls === 1, 'a tool call');
      const o = streamObject({ model, prompt: 'An object', schema: jsonSchema({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }), maxRetries: 0 });
      for await (const _partial of o.partialObjectStream); // its promises settle as the stream is read
      const obj = await o.object; ok(typeof obj.name === 'string', 'an object');
      const u = await s.usage; ok(u.inputTokens > 0, 'input tokens');
      console.log(JSON.stringify({ detail: 'generateText, streamText with a tool call, streamObject ' + JSON.stringify(obj) }));`,
  },
  {
    client: 'langchain-anthropic', pkg: '@langchain/anthropic', name: 'invoke-stream-tools',
    code: `import { ChatAnthropic } from '@langchain/anthropic'; ${check}
      const llm = new ChatAnthropic({ model: process.env.MODEL, apiKey: process.env.KEY, anthropicApiUrl: process.env.BASE, maxRetries: 0, maxTokens: 200 });
      const r = await llm.invoke('Hello LangChain'); ok(String(r.content).includes('Hello LangChain'), 'the echo');
      let last = null; for await (const chunk of await llm.stream('Stream LangChain')) last = last ? last.concat(chunk) : chunk;
      ok(last.usage_metadata?.input_tokens > 0, 'streamed input tokens (got ' + last.usage_metadata?.input_tokens + ')');
      const withTools = llm.bindTools([{ name: 'weather', description: 'Weather by city', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }]);
      const t = await withTools.invoke('[sandbox:tool=weather] weather'); ok(t.tool_calls?.length === 1, 'a tool call');
      console.log(JSON.stringify({ detail: 'invoke, stream (input_tokens ' + last.usage_metadata.input_tokens + '), bindTools' }));`,
  },
];

function runScenario(scenario, base, key) {
  const major = Number(process.versions.node.split('.')[0]);
  if (scenario.minNode && major < scenario.minNode) return Promise.resolve({ ok: null, detail: `skipped: needs Node ${scenario.minNode}+` });
  const env = { ...process.env, BASE: base, KEY: key, MODEL };
  let child;
  if (scenario.run) {
    const home = mkdtempSync(path.join(tmpdir(), 'claude-home-'));
    child = spawn(path.join(clientsDir, 'node_modules/.bin', scenario.run.cmd), scenario.run.args, {
      cwd: home,
      env: { ...env, HOME: home, ANTHROPIC_BASE_URL: base, ANTHROPIC_API_KEY: key, ANTHROPIC_MODEL: MODEL, ANTHROPIC_SMALL_FAST_MODEL: MODEL, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1' },
    });
    child.once('exit', () => rmSync(home, { recursive: true, force: true }));
  } else {
    child = spawn(process.execPath, ['--input-type=module', '-e', scenario.code], { cwd: clientsDir, env });
  }
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      if (scenario.run) {
        const passed = code === 0 && scenario.run.expect.test(out);
        return resolve({ ok: passed, detail: passed ? `exit 0: ${out.trim().split('\n').at(-1).slice(0, 60)}` : `exit ${code}: ${(err || out).trim().slice(-200)}` });
      }
      if (code !== 0) return resolve({ ok: false, detail: (err.split('\n').find((l) => /Error|expected/.test(l)) ?? err.trim().split('\n').at(-1) ?? '').trim().slice(0, 300) });
      resolve({ ok: true, detail: JSON.parse(out.trim().split('\n').at(-1)).detail });
    }),
  );
}

function writeFixtures(seen) {
  const counters = new Map();
  for (const entry of seen) {
    const dir = path.join(captureDir, `${entry.client}-${entry.version}`);
    mkdirSync(dir, { recursive: true });
    const n = (counters.get(entry.scenario) ?? 0) + 1;
    counters.set(entry.scenario, n);
    const file = path.join(dir, `${entry.scenario}-${n}.json`);
    const fixture = { client: entry.client, version: entry.version, scenario: entry.scenario, capturedStatus: entry.status, request: entry.request };
    writeFileSync(file, JSON.stringify(fixture, null, 2) + '\n');
  }
}

const given = option('url');
const tollgate = given ? { url: given, key: option('key'), stop: async () => undefined } : await startTollgate();
const proxy = await startProxy(tollgate.url);
const rows = [];
try {
  for (const scenario of SCENARIOS) {
    const version = versionOf(scenario.pkg);
    proxy.label({ client: scenario.client, version, scenario: scenario.name });
    const result = await runScenario(scenario, proxy.url, tollgate.key);
    rows.push([`${scenario.client} ${version}`, scenario.name, result.ok === null ? 'SKIP' : result.ok ? 'PASS' : 'FAIL', result.detail]);
  }
  proxy.label(null);
  if (captureDir) writeFixtures(proxy.seen);
} finally {
  await proxy.close();
  await tollgate.stop();
}
const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length), ['client', 'scenario', 'result'][i].length));
const line = (cells) => `| ${cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]) : c)).join(' | ')} |`;
console.log(line(['client', 'scenario', 'result', 'detail']));
console.log(line(widths.map((w) => '-'.repeat(w)).concat('---')));
for (const row of rows) console.log(line(row));
process.exit(rows.some((r) => r[2] === 'FAIL') ? 1 : 0);
