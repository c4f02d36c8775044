#!/usr/bin/env node
/**
 * The real OpenAI-side clients end to end against Tollgate on the sandbox models (docs/clients-openai.md):
 * Codex (`codex exec`), the OpenAI Agents SDK, the Vercel AI SDK's openai provider (responses and
 * chat), LangChain's ChatOpenAI (Chat Completions and useResponsesApi) and the openai SDK. Prints a
 * table client | scenario | result and exits 1 when a scenario fails.
 *
 *   node scripts/clients-openai.mjs                      start a Tollgate on DATABASE_URL's server (a fresh database, dropped after)
 *   node scripts/clients-openai.mjs --url URL --key KEY  use a running Tollgate and a funded prepaid key
 *   --clients-dir DIR   where the clients are installed (default: <tmp>/tollgate-clients-openai; installed when missing)
 *   --capture DIR       also write every request the clients send to DIR/<client>-<version>/<scenario>-<n>.json
 *                       (through a logging proxy; secrets dropped): the fixtures of test/integration/clients-openai.test.ts
 *   --only NAME         run the clients whose name contains NAME
 *
 * Needs the network to npm for the first install only. Not run in CI (it installs a coding agent).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A command with stdin closed (Codex reads more input from an open stdin); resolves with its output whatever its exit. */
function runClosed(bin, argv, options) {
  return new Promise((resolve) => {
    const child = spawn(bin, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeout ?? 180_000);
    child.once('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The versions docs/clients-openai.md reports; `--clients-dir` with other versions works too (the table names them). */
const CLIENTS = {
  openai: '7.57.0',
  '@openai/agents': '0.20.0',
  ai: '7.0.173',
  '@ai-sdk/openai': '4.0.118',
  '@langchain/openai': '1.6.0',
  '@langchain/core': '1.4.0',
  zod: '4.6.7',
  '@openai/codex': '0.169.0',
};

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const clientsDir = option('--clients-dir') ?? join(tmpdir(), 'tollgate-clients-openai');
const captureDir = option('--capture');
const only = option('--only');

// --- the clients ------------------------------------------------------------------------------

async function installClients() {
  if (Object.keys(CLIENTS).every((name) => existsSync(join(clientsDir, 'node_modules', name, 'package.json')))) return;
  mkdirSync(clientsDir, { recursive: true });
  if (!existsSync(join(clientsDir, 'package.json'))) writeFileSync(join(clientsDir, 'package.json'), '{"private": true}\n');
  console.error(`Installing the clients into ${clientsDir}…`);
  await run('npm', ['install', '--no-audit', '--no-fund', ...Object.entries(CLIENTS).map(([name, version]) => `${name}@${version}`)], { cwd: clientsDir });
}

const clientRequire = () => createRequire(join(clientsDir, 'package.json'));
const versionOf = (name) => JSON.parse(readFileSync(join(clientsDir, 'node_modules', name, 'package.json'), 'utf8')).version;
const load = (name) => import(pathToFileURL(clientRequire().resolve(name)).href);

// --- a Tollgate -------------------------------------------------------------------------------

async function freePort() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A Tollgate on a fresh database of DATABASE_URL's server, with a funded tier-5 prepaid key. */
async function startTollgate() {
  const server = process.env.DATABASE_URL;
  if (!server) throw new Error('Set DATABASE_URL (a PostgreSQL server) or pass --url and --key.');
  const pg = createRequire(join(ROOT, 'package.json'))('pg');
  const name = `tollgate_clients_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  const port = await freePort();
  const env = { ...process.env, DATABASE_URL: url.toString(), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', TOLLGATE_DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-clients-data-')), TOLLGATE_SANDBOX_VIDEO_RENDER_MS: '500' };
  const tollgate = (...cli) => run(process.execPath, ['-r', './test/support/swc-register.js', 'src/main.ts', ...cli], { cwd: ROOT, env });
  await tollgate('migrate');
  const account = JSON.parse((await tollgate('admin', 'create-account', '--name', 'clients', '--json')).stdout);
  await tollgate('admin', 'add-funds', '--account', account.id, '--amount-usd', '100', '--json');
  await tollgate('admin', 'set-tier', '--account', account.id, '--tier', '5', '--json');
  const key = JSON.parse((await tollgate('admin', 'create-key', '--account', account.id, '--name', 'clients', '--json')).stdout).secret;
  const child = spawn(process.execPath, ['-r', './test/support/swc-register.js', 'src/main.ts', 'start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => String(chunk).includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`Tollgate exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      const drop = new pg.Client({ connectionString: server });
      await drop.connect();
      await drop.query(`drop database if exists ${name}`);
      await drop.end();
      rmSync(env.TOLLGATE_DATA_DIR, { recursive: true, force: true });
    },
  };
}

// --- the logging proxy ------------------------------------------------------------------------

/** Header values never written to a capture. */
const SECRET_HEADERS = /^(authorization|x-api-key|cookie)$/i;
/** Codex's installation id identifies a machine: replaced in captures. */
const scrub = (text) => text.replace(/("?x-codex-installation-id"?\s*[:=]\s*\\?"?|\\?"installation_id\\?"\s*:\s*\\?")[0-9a-f-]{36}/g, '$100000000-0000-0000-0000-000000000000');

/** http://proxy/<client>/<scenario>/v1/… → Tollgate's /v1/…; with --capture, each request is written down with the status it got. */
async function startProxy(target) {
  const counts = new Map();
  const server = http.createServer((req, res) => {
    const [, client, scenario, ...rest] = req.url.split('/');
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
          if (!captureDir || !/^\/v1\/(chat\/completions|responses|models)/.test(path)) return;
          const key = `${client}/${scenario}`;
          const n = (counts.get(key) ?? 0) + 1;
          counts.set(key, n);
          const text = Buffer.concat(answered).toString('utf8');
          let error;
          try {
            error = answer.statusCode >= 400 ? JSON.parse(text).error : undefined;
          } catch {
            error = undefined;
          }
          const record = {
            client,
            scenario,
            method: req.method,
            path,
            headers: Object.fromEntries(Object.entries(headers).filter(([name]) => !SECRET_HEADERS.test(name) && /^(user-agent|content-type|accept|originator|openai-beta)$/i.test(name))),
            body: body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined,
            captured: { status: answer.statusCode, ...(error ? { code: error.code, field: error.details?.field } : {}) },
          };
          mkdirSync(join(captureDir, client), { recursive: true });
          writeFileSync(join(captureDir, client, `${scenario}-${n}.json`), `${scrub(JSON.stringify(record, null, 2))}\n`);
        });
      });
      upstream.on('error', (error) => res.destroy(error));
      upstream.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

// --- the scenarios ----------------------------------------------------------------------------

const WEATHER = 'What is the weather like in Paris?';
/** Checks that `text` holds `part`; answers the line holding it, as the table shows the result. */
const expectIncludes = (text, part) => {
  const all = String(text);
  if (!all.includes(part)) throw new Error(`expected ${JSON.stringify(part)} in ${JSON.stringify(all.slice(-300))}`);
  return all.split('\n').find((line) => line.includes(part)).trim().slice(0, 80);
};

function openaiScenarios(OpenAI, { zodResponseFormat, zodTextFormat }, z) {
  const weatherTool = { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
  return {
    'chat-create': async (client) => expectIncludes((await client.chat.completions.create({ model: 'sandbox/echo', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello chat' }] })).choices[0].message.content, 'Hello chat'),
    'chat-stream': async (client) => {
      let text = '';
      let usage;
      for await (const chunk of await client.chat.completions.create({ model: 'sandbox/echo', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello stream' }] })) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      if (!usage?.total_tokens) throw new Error('no usage chunk');
      return expectIncludes(text, 'Hello stream');
    },
    'chat-tools': async (client) => {
      const messages = [{ role: 'user', content: WEATHER }];
      const first = await client.chat.completions.create({ model: 'sandbox/echo', messages, tools: [weatherTool] });
      const call = first.choices[0].message.tool_calls?.[0];
      if (!call) throw new Error('no tool call');
      messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21°C' });
      return expectIncludes((await client.chat.completions.create({ model: 'sandbox/echo', messages, tools: [weatherTool] })).choices[0].message.content, 'Sunny');
    },
    'chat-parse': async (client) => {
      const parsed = await client.chat.completions.parse({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'A city' }], response_format: zodResponseFormat(z.object({ city: z.string(), population: z.number() }), 'city') });
      return JSON.stringify(parsed.choices[0].message.parsed);
    },
    'responses-create': async (client) => expectIncludes((await client.responses.create({ model: 'sandbox/echo', instructions: 'Be brief.', input: 'Hello responses', store: false })).output_text, 'Hello responses'),
    'responses-stream': async (client) => {
      const stream = client.responses.stream({ model: 'sandbox/reasoner', input: 'Hello streamed responses', reasoning: { effort: 'low', summary: 'auto' } });
      return expectIncludes((await stream.finalResponse()).output_text, 'Hello streamed responses');
    },
    'responses-tools': async (client) => {
      const tools = [{ type: 'function', name: 'get_weather', description: 'Weather by city', parameters: weatherTool.function.parameters, strict: false }];
      const first = await client.responses.create({ model: 'sandbox/echo', input: WEATHER, tools, store: false });
      const call = first.output.find((item) => item.type === 'function_call');
      if (!call) throw new Error('no function_call');
      const second = await client.responses.create({ model: 'sandbox/echo', tools, store: false, input: [{ role: 'user', content: WEATHER }, ...first.output, { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21°C' }] });
      return expectIncludes(second.output_text, 'Sunny');
    },
    'responses-parse': async (client) => {
      const parsed = await client.responses.parse({ model: 'sandbox/echo', input: 'A city', text: { format: zodTextFormat(z.object({ city: z.string() }), 'city') } });
      return JSON.stringify(parsed.output_parsed);
    },
    'models-retrieve': async (client) => {
      const { data, response } = await client.models.retrieve('echo').withResponse();
      return `${data.id} (routed from ${response.headers.get('x-service-model-routed-from')})`;
    },
    'videos-delete': async (client) => {
      let video = await client.videos.create({ model: 'sandbox/video', prompt: 'a lighthouse', seconds: '4' });
      for (let i = 0; i < 200 && video.status !== 'completed' && video.status !== 'failed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        video = await client.videos.retrieve(video.id);
      }
      const deleted = await client.videos.delete(video.id);
      return JSON.stringify(deleted);
    },
  };
}

async function openaiSdk(base) {
  const { default: OpenAI } = await load('openai');
  const helpers = { ...(await load('openai/helpers/zod')) };
  const { z } = await load('zod');
  return Object.entries(openaiScenarios(OpenAI, helpers, z)).map(([name, scenario]) => [name, () => scenario(new OpenAI({ baseURL: base(name), apiKey: KEY(), maxRetries: 0 }))]);
}

async function agentsSdk(base) {
  const { Agent, Runner, tool, OpenAIProvider, setTracingDisabled } = await load('@openai/agents');
  const { default: OpenAI } = await load('openai');
  const { z } = await load('zod');
  setTracingDisabled(true);
  const getWeather = tool({ name: 'get_weather', description: 'Weather by city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `Sunny in ${city}` });
  const agent = new Agent({ name: 'Weather', instructions: 'Answer with the weather tool.', model: 'sandbox/echo', tools: [getWeather] });
  const scenario = (name, useResponses, stream) => [
    name,
    async () => {
      const openAIClient = new OpenAI({ baseURL: base(name), apiKey: KEY(), maxRetries: 0 });
      const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses }) });
      const result = await runner.run(agent, WEATHER, stream ? { stream: true } : {});
      if (stream) {
        for await (const _event of result) {
          // drained: the run completes once its events are read
        }
        await result.completed;
      }
      return expectIncludes(result.finalOutput, 'Sunny in');
    },
  ];
  return [scenario('responses-tool', true, false), scenario('responses-tool-stream', true, true), scenario('chat-tool', false, false)];
}

async function aiSdk(base) {
  const { createOpenAI } = await load('@ai-sdk/openai');
  const { generateText, streamText, generateObject, streamObject, tool, stepCountIs } = await load('ai');
  const { z } = await load('zod');
  const tools = { get_weather: tool({ description: 'Weather by city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `Sunny in ${city}` }) };
  const schema = z.object({ city: z.string(), population: z.number() });
  const scenarios = [];
  for (const mode of ['responses', 'chat']) {
    const model = (name) => createOpenAI({ baseURL: base(name), apiKey: KEY() })[mode]('sandbox/echo');
    scenarios.push(
      [`${mode}-generateText-tools`, async () => expectIncludes((await generateText({ model: model(`${mode}-generateText-tools`), prompt: WEATHER, tools, stopWhen: stepCountIs(3) })).text, 'Sunny in')],
      [`${mode}-streamText-tools`, async () => {
        const result = streamText({ model: model(`${mode}-streamText-tools`), prompt: WEATHER, tools, stopWhen: stepCountIs(3) });
        let text = '';
        for await (const part of result.textStream) text += part;
        return expectIncludes(text, 'Sunny in');
      }],
      [`${mode}-generateObject`, async () => JSON.stringify((await generateObject({ model: model(`${mode}-generateObject`), schema, prompt: 'A city' })).object)],
      [`${mode}-streamObject`, async () => {
        const result = streamObject({ model: model(`${mode}-streamObject`), schema, prompt: 'A city' });
        for await (const _partial of result.partialObjectStream) {
          // drained
        }
        return JSON.stringify(await result.object);
      }],
    );
  }
  return scenarios;
}

async function langchain(base) {
  const { ChatOpenAI } = await load('@langchain/openai');
  const { tool } = await load('@langchain/core/tools');
  const { HumanMessage, ToolMessage } = await load('@langchain/core/messages');
  const { z } = await load('zod');
  const getWeather = tool(async ({ city }) => `Sunny in ${city}`, { name: 'get_weather', description: 'Weather by city', schema: z.object({ city: z.string() }) });
  const scenarios = [];
  for (const [prefix, useResponsesApi] of [['chat', false], ['responses', true]]) {
    const llm = (name) => new ChatOpenAI({ model: 'sandbox/echo', apiKey: KEY(), configuration: { baseURL: base(name) }, useResponsesApi, maxRetries: 0 });
    scenarios.push(
      [`${prefix}-invoke`, async () => expectIncludes((await llm(`${prefix}-invoke`).invoke('Hello LangChain')).text, 'Hello LangChain')],
      [`${prefix}-stream`, async () => {
        let text = '';
        let usage;
        for await (const chunk of await llm(`${prefix}-stream`).stream('Hello streamed LangChain')) {
          text += chunk.text;
          usage = chunk.usage_metadata ?? usage;
        }
        if (!usage?.input_tokens) throw new Error(`no input tokens in usage: ${JSON.stringify(usage)}`);
        return expectIncludes(text, 'Hello streamed LangChain');
      }],
      [`${prefix}-tools`, async () => {
        const model = llm(`${prefix}-tools`).bindTools([getWeather]);
        const messages = [new HumanMessage(WEATHER)];
        const first = await model.invoke(messages);
        const call = first.tool_calls?.[0];
        if (!call) throw new Error('no tool call');
        messages.push(first, new ToolMessage({ tool_call_id: call.id, content: await getWeather.invoke(call.args) }));
        return expectIncludes((await model.invoke(messages)).text, 'Sunny in');
      }],
      [`${prefix}-structured`, async () => JSON.stringify(await llm(`${prefix}-structured`).withStructuredOutput(z.object({ city: z.string() })).invoke('A city'))],
    );
  }
  return scenarios;
}

async function codex(base) {
  const bin = join(clientsDir, 'node_modules', '.bin', 'codex');
  const exec = (name, prompt, { model = 'sandbox/echo', webSearch = 'disabled' } = {}) => async () => {
    // Not under the system temp dir: Codex refuses to put its helper binaries there.
    const home = mkdtempSync(join(clientsDir, 'codex-home-'));
    const work = mkdtempSync(join(clientsDir, 'codex-work-'));
    try {
      // A custom provider on the Responses wire; web search is a hosted tool Tollgate does not offer.
      writeFileSync(join(home, 'config.toml'), [
        `model = "${model}"`,
        'model_provider = "tollgate"',
        ...(webSearch ? [`web_search = "${webSearch}"`] : []),
        '',
        '[model_providers.tollgate]',
        'name = "Tollgate"',
        `base_url = "${base(name)}"`,
        'env_key = "TOLLGATE_API_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n'));
      return await runClosed(bin, ['exec', '--skip-git-repo-check', '-C', work, prompt], { env: { ...process.env, CODEX_HOME: home, TOLLGATE_API_KEY: KEY() }, timeout: 180_000 });
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    }
  };
  return [
    ['exec-hello', async () => expectIncludes(await exec('exec-hello', 'Say hello to Tollgate')(), 'Say hello to Tollgate')],
    ['exec-tool-loop', async () => expectIncludes(await exec('exec-tool-loop', 'Run a shell command [sandbox:tool=exec_command]')(), 'Tool exec_command returned')],
    ['exec-namespace-tool', async () => expectIncludes(await exec('exec-namespace-tool', 'Close the agent [sandbox:tool=multi_agent_v1__close_agent]')(), 'returned: invalid agent id')],
    ['exec-reasoning', async () => expectIncludes(await exec('exec-reasoning', 'Think, then list files [sandbox:tool=exec_command]', { model: 'sandbox/reasoner' })(), 'Tool exec_command returned')],
    ['exec-web-search-default', async () => {
      const out = await exec('exec-web-search-default', 'Say hello', { webSearch: null })();
      expectIncludes(out, 'web_search = \\"disabled\\"');
      return 'refused as designed: the error says web_search = "disabled"';
    }],
  ];
}

// --- main -------------------------------------------------------------------------------------

let apiKey = option('--key');
const KEY = () => apiKey;

async function main() {
  await installClients();
  const given = option('--url');
  const tollgate = given ? { url: given.replace(/\/+$/, ''), key: apiKey, stop: async () => undefined } : await startTollgate();
  if (!tollgate.key) throw new Error('--url needs --key (a funded prepaid key)');
  apiKey = tollgate.key;
  const proxy = await startProxy(tollgate.url);
  const clients = [
    ['openai', 'openai', openaiSdk],
    ['agents', '@openai/agents', agentsSdk],
    ['ai-sdk-openai', '@ai-sdk/openai', aiSdk],
    ['langchain-openai', '@langchain/openai', langchain],
    ['codex', '@openai/codex', codex],
  ].filter(([name]) => !only || name.includes(only));
  const rows = [];
  let failed = 0;
  try {
    for (const [name, pkg, scenariosOf] of clients) {
      const label = `${name}-${versionOf(pkg)}`;
      for (const [scenario, fn] of await scenariosOf((s) => `${proxy.url}/${label}/${s}/v1`)) {
        let result;
        try {
          result = `ok: ${await fn()}`;
        } catch (error) {
          failed++;
          result = `FAIL: ${String(error?.message ?? error).split('\n')[0].slice(0, 160)}`;
        }
        rows.push([label, scenario, result]);
        console.error(`${label} | ${scenario} | ${result}`);
      }
    }
  } finally {
    await proxy.close();
    await tollgate.stop();
  }
  console.log('| client | scenario | result |\n|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  console.log(`\n${rows.length - failed} of ${rows.length} scenarios passed.`);
  process.exitCode = failed > 0 ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
