#!/usr/bin/env node
/**
 * `npm run test:clients`: the real clients end to end against a Tollgate on the sandbox models
 * (docs/clients.md): Claude Code, Codex, the Anthropic and openai SDKs, the AI SDK's anthropic and
 * openai providers, the OpenAI Agents SDK, LangChain's ChatAnthropic and ChatOpenAI. Prints one
 * table (client | version | scenario | result | detail) and exits 1 when a scenario fails.
 *
 *   npm run test:clients                          a Tollgate on a fresh database of DATABASE_URL's server, dropped after
 *   npm run test:clients -- --url URL --key KEY   a running Tollgate and a funded prepaid key
 *   --side anthropic|openai   only the clients of one side (npm run test:clients:anthropic, :openai)
 *   --only NAME               only the clients whose name contains NAME (`--only codex`)
 *   --capture DIR             also write every request the clients send to DIR/<client>-<version>/<scenario>-<n>.json,
 *                             secrets removed: the fixtures of test/integration/clients.test.ts (DIR: test/fixtures/clients)
 *   --clients-dir DIR         where the clients live (default .clients/ in this checkout, gitignored)
 *
 * The clients are the exact versions of scripts/clients/package.json, installed from npm into the
 * clients folder on first use (and again when the manifest changes), with the npm build of Node 22
 * (`node` 22.x) as their runtime: Claude Code and the AI SDK ask for Node 22. Tollgate itself runs
 * on the Node that runs this script. Not part of `npm test`: it needs npm once and installs a
 * coding agent.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCENARIOS = join(ROOT, 'scripts', 'clients');
const MANIFEST = join(SCENARIOS, 'package.json');

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const clientsDir = resolve(option('--clients-dir') ?? join(ROOT, '.clients'));
const captureDir = option('--capture') ? resolve(option('--capture')) : null;
const side = option('--side');
const only = option('--only');

// --- the clients ------------------------------------------------------------------------------

/** Installs the manifest's clients unless the clients folder already holds exactly them; answers the Node 22 to run them with. */
async function installClients() {
  const manifest = readFileSync(MANIFEST, 'utf8');
  const installed = join(clientsDir, 'package.json');
  const wanted = Object.keys(JSON.parse(manifest).dependencies);
  const current =
    existsSync(installed) &&
    readFileSync(installed, 'utf8') === manifest &&
    wanted.every((name) => existsSync(join(clientsDir, 'node_modules', name, 'package.json')));
  if (!current) {
    mkdirSync(clientsDir, { recursive: true });
    writeFileSync(installed, manifest);
    console.error(`Installing the clients of scripts/clients/package.json into ${clientsDir} (npm)…`);
    await run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock'], { cwd: clientsDir, maxBuffer: 64 * 1024 * 1024 });
  }
  const node = join(clientsDir, 'node_modules', 'node', 'bin', 'node');
  const version = existsSync(node) ? (await run(node, ['--version'])).stdout.trim() : 'missing';
  if (!version.startsWith('v22.'))
    throw new Error(`The clients' Node 22 (npm package node, ${node}) is ${version}: remove ${clientsDir} and run again.`);
  return node;
}

const versionOf = (pkg) => JSON.parse(readFileSync(join(clientsDir, 'node_modules', pkg, 'package.json'), 'utf8')).version;

// --- a Tollgate -------------------------------------------------------------------------------

async function freePort() {
  const server = http.createServer();
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

/** A Tollgate from this checkout on a fresh database of DATABASE_URL's server, with a funded tier-5 prepaid key. */
async function startTollgate() {
  const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const pg = createRequire(join(ROOT, 'package.json'))('pg');
  const database = `tollgate_clients_${Date.now().toString(36)}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: server });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${database}`);
  const url = Object.assign(new URL(server), { pathname: `/${database}` }).toString();
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-clients-data-'));
  const env = {
    ...process.env,
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    TOLLGATE_DATA_DIR: dataDir,
    TOLLGATE_SANDBOX_VIDEO_RENDER_MS: '500',
  };
  const tollgate = async (...cli) =>
    (await run(process.execPath, ['-r', './test/support/swc-register.js', 'src/main.ts', ...cli], { cwd: ROOT, env })).stdout;
  await tollgate('migrate');
  const account = JSON.parse(await tollgate('admin', 'create-account', '--name', 'clients', '--json')).id;
  await tollgate('admin', 'add-funds', '--account', account, '--amount-usd', '100', '--json');
  // Tier 5: the clients' bursts stay under its rate limits.
  await tollgate('admin', 'set-tier', '--account', account, '--tier', '5', '--json');
  const key = JSON.parse(await tollgate('admin', 'create-key', '--account', account, '--name', 'clients', '--json')).secret;
  const child = spawn(process.execPath, ['-r', './test/support/swc-register.js', 'src/main.ts', 'start'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (
    let i = 0;
    i < 240 &&
    !(await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (child.exitCode !== null) throw new Error(`Tollgate exited with ${child.exitCode}`);
    await new Promise((done) => setTimeout(done, 250));
  }
  return {
    url: base,
    key,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((done) => child.once('exit', done));
      }
      await admin(`drop database if exists ${database} with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// --- the logging proxy ------------------------------------------------------------------------

/** Never written to a capture. */
const SECRET_HEADERS = /^(authorization|x-api-key|cookie)$/i;
/** The request headers a capture keeps: what shapes how Tollgate reads the request. */
const KEPT_HEADERS = /^(anthropic-.*|content-type|user-agent|x-stainless-lang|accept|originator|openai-beta)$/i;
const CAPTURED_PATHS = /^\/v1\/(chat\/completions|responses|messages|models)/;

/** Machine and user identifiers in request bodies: replaced in captures. */
function scrub(body) {
  if (body?.metadata?.user_id !== undefined) body.metadata.user_id = 'user-scrubbed';
  return JSON.parse(
    JSON.stringify(body).replace(
      /("?x-codex-installation-id"?\s*[:=]\s*\\?"?|\\?"installation_id\\?"\s*:\s*\\?")[0-9a-f-]{36}/g,
      '$100000000-0000-0000-0000-000000000000',
    ),
  );
}

/** http://proxy/<client>-<version>/<scenario>/v1/… → Tollgate's /v1/…; with --capture, each request is written down with the answer it got. */
async function startProxy(target) {
  const counts = new Map();
  const server = http.createServer((req, res) => {
    const [, label, scenario, ...rest] = req.url.split('/');
    const path = `/${rest.join('/')}`;
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'host'));
      const upstream = http.request(`${target}${path}`, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        const answered = [];
        answer.on('data', (chunk) => {
          answered.push(chunk);
          res.write(chunk);
        });
        answer.on('end', () => {
          res.end();
          if (captureDir && CAPTURED_PATHS.test(path))
            capture({
              label,
              scenario,
              method: req.method,
              path,
              headers,
              body,
              status: answer.statusCode,
              answer: Buffer.concat(answered),
            });
        });
      });
      upstream.on('error', (error) => res.destroy(error));
      upstream.end(body);
    });
  });

  function capture({ label, scenario, method, path, headers, body, status, answer }) {
    const n = (counts.get(`${label}/${scenario}`) ?? 0) + 1;
    counts.set(`${label}/${scenario}`, n);
    let error;
    try {
      error = status >= 400 ? JSON.parse(answer.toString('utf8')).error : undefined;
    } catch {
      error = undefined;
    }
    const [, client, version] = /^(.*)-(\d[\w.-]*)$/.exec(label);
    const fixture = {
      client,
      version,
      scenario,
      method,
      path,
      headers: Object.fromEntries(Object.entries(headers).filter(([name]) => !SECRET_HEADERS.test(name) && KEPT_HEADERS.test(name))),
      ...(body.length > 0 ? { body: scrub(JSON.parse(body.toString('utf8'))) } : {}),
      captured: { status, ...(error?.code ? { code: error.code } : {}), ...(error?.details?.field ? { field: error.details.field } : {}) },
    };
    mkdirSync(join(captureDir, label), { recursive: true });
    writeFileSync(join(captureDir, label, `${scenario}-${n}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
  }

  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((done) => server.close(done)) };
}

// --- one client's scenarios, in a process of the clients' Node ------------------------------------

/** Runs a client's scenarios (worker.mjs) under Node 22, its own bin directory first on PATH (for the CLIs' `#!/usr/bin/env node`). */
function runClient(node, file, env) {
  return new Promise((done) => {
    const child = spawn(node, [join(SCENARIOS, 'worker.mjs'), file], {
      cwd: clientsDir,
      env: { ...process.env, ...env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const results = [];
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    // Every scenario has its own bound; this one only stops a client that hangs outside them.
    const timer = setTimeout(() => child.kill('SIGKILL'), 20 * 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      for (const line of out.split('\n')) if (line.startsWith('@@result ')) results.push(JSON.parse(line.slice('@@result '.length)));
      if (code !== 0)
        results.push({
          scenario: '(client)',
          ok: false,
          detail: `exit ${code}: ${(
            err
              .trim()
              .split('\n')
              .find((l) => /Error/.test(l)) ??
            err.trim().split('\n').at(-1) ??
            ''
          ).slice(0, 200)}`,
        });
      done(results);
    });
  });
}

// --- main -------------------------------------------------------------------------------------

const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\s+/g, ' ');

async function main() {
  const node = await installClients();
  const clients = [];
  for (const file of readdirSync(SCENARIOS).filter((name) => name.endsWith('.mjs') && name !== 'kit.mjs' && name !== 'worker.mjs')) {
    const { default: client } = await import(join(SCENARIOS, file));
    if ((!side || client.side === side) && (!only || client.name.includes(only))) clients.push({ ...client, file: join(SCENARIOS, file) });
  }
  const given = option('--url');
  const tollgate = given ? { url: given.replace(/\/+$/, ''), key: option('--key'), stop: async () => undefined } : await startTollgate();
  if (!tollgate.key) throw new Error('--url needs --key (a funded prepaid key)');
  const proxy = await startProxy(tollgate.url);
  const rows = [];
  try {
    for (const client of clients) {
      const version = versionOf(client.package);
      const env = {
        CLIENTS_DIR: clientsDir,
        TOLLGATE_PROXY: proxy.url,
        CLIENT_LABEL: `${client.name}-${version}`,
        TOLLGATE_KEY: tollgate.key,
      };
      for (const result of await runClient(node, client.file, env)) {
        rows.push([client.name, version, result.scenario, result.ok ? 'PASS' : 'FAIL', result.detail]);
        console.error(`${client.name} ${version} | ${result.scenario} | ${result.ok ? 'PASS' : 'FAIL'} | ${result.detail}`);
      }
    }
  } finally {
    await proxy.close();
    await tollgate.stop();
  }
  const failed = rows.filter((row) => row[3] !== 'PASS').length;
  console.log('| client | version | scenario | result | detail |\n|---|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.map(cell).join(' | ')} |`);
  console.log(
    `\n${rows.length - failed} of ${rows.length} scenarios passed (clients on Node ${(await run(node, ['--version'])).stdout.trim().slice(1)}, Tollgate on Node ${process.versions.node}).`,
  );
  process.exitCode = failed > 0 || rows.length === 0 ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
