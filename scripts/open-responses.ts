/**
 * The Open Responses compliance runner (`bin/compliance-test.ts` of github.com/openresponses/
 * openresponses) against a Tollgate serving the sandbox models and models of the OpenAI (Chat and
 * Responses upstreams), Anthropic and Gemini fakes, each fake scripted per test (a weather tool
 * call for `tool-calling`). Prints one table, test × model (docs/clients.md).
 *
 *   npm run test:open-responses -- DIR
 *
 * DIR holds the runner's dependencies and the repository in DIR/src:
 *   npm install --prefix DIR tsx@4 zod@3 ws@8
 *   git clone https://github.com/openresponses/openresponses DIR/src && git -C DIR/src checkout 92c12d9
 * Needs DATABASE_URL's server, like the tests (a database is created and dropped).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startTextHarness, textAccount } from '../test/support/text';
import { startVendorFakes } from '../test/support/vendor-fakes';

const run = promisify(execFile);

const TESTS = [
  'basic-response',
  'assistant-phase',
  'response-output-phase-schema',
  'streaming-response',
  'system-prompt',
  'tool-calling',
  'image-input',
  'multi-turn',
  'compact-response',
  'compact-missing-model',
  'websocket-response',
  'websocket-sequential-responses',
  'websocket-continuation',
  'websocket-reconnect-store-false-recovery',
  'websocket-previous-response-not-found',
  'websocket-failed-continuation-evicts-cache',
  'websocket-compact-new-chain',
];

/** A failure in a few words: the status Tollgate answered, or what the runner could not do. */
function reason(errors: string): string {
  const status = /HTTP (\d{3})/.exec(errors);
  if (status) return `HTTP ${status[1]}`;
  if (errors.includes('WebSocket connection failed')) return 'no WebSocket';
  return errors.replace(/\s+/g, ' ').slice(0, 40);
}

interface RunnerResult {
  id: string;
  status: string;
  errors?: string[];
}

async function main(): Promise<void> {
  const dir = resolve(process.argv[2] ?? '');
  const fakes = await startVendorFakes();
  const { openai, anthropic, gemini } = fakes;
  const h = await startTextHarness(fakes.env);
  // Node 20 has no global WebSocket, which the runner's WebSocket tests use.
  const scratch = mkdtempSync(join(tmpdir(), 'open-responses-'));
  const wsGlobal = join(scratch, 'ws-global.mjs');
  writeFileSync(wsGlobal, `import WebSocket from '${join(dir, 'node_modules', 'ws', 'index.js')}'; globalThis.WebSocket ??= WebSocket;\n`);
  try {
    const a = await textAccount(h.t);
    const weather = { location: 'San Francisco, CA' };
    const text = 'Hello there, friend!';
    /** Each model, and how its fake is scripted for a test (the sandbox needs nothing). */
    const models: Record<string, (toolCall: boolean) => void> = {
      'sandbox/echo': () => undefined,
      'sandbox/reasoner': () => undefined,
      'openai/gpt-4o-mini': (tool) =>
        openai.script(tool ? { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: JSON.stringify(weather) }] } : { text }),
      'openai/o4-mini': (tool) =>
        openai.script(
          tool
            ? { reasoning: 'Weather needed.', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: JSON.stringify(weather) }] }
            : { reasoning: 'Short thought.', text },
        ),
      'anthropic/claude-sonnet-4-5': (tool) =>
        anthropic.script(tool ? { toolCalls: [{ id: 'toolu_1', name: 'get_weather', input: weather }] } : { text }),
      'google/gemini-2.5-flash': (tool) => gemini.script(tool ? { functionCalls: [{ name: 'get_weather', args: weather }] } : { text }),
    };
    const cells = new Map<string, string>();
    for (const [model, script] of Object.entries(models)) {
      for (const id of TESTS) {
        script(id === 'tool-calling');
        let out: string;
        try {
          const argv = [
            '--import',
            wsGlobal,
            'src/bin/compliance-test.ts',
            '-u',
            `${h.t.url}/v1`,
            '-k',
            a.secret,
            '-m',
            model,
            '--filter',
            id,
            '--json',
          ];
          out = (await run(join(dir, 'node_modules', '.bin', 'tsx'), argv, { cwd: dir, encoding: 'utf8' })).stdout;
        } catch (error) {
          // The runner exits 1 when a test fails; its JSON is still on stdout.
          out = (error as { stdout?: string }).stdout ?? '';
        }
        const parsed = JSON.parse(out.slice(out.indexOf('{'))) as { results?: RunnerResult[] } | RunnerResult[];
        for (const result of Array.isArray(parsed) ? parsed : (parsed.results ?? [])) {
          cells.set(`${result.id}|${model}`, result.status === 'passed' ? 'pass' : `fail: ${reason((result.errors ?? []).join('; '))}`);
        }
      }
    }
    const names = Object.keys(models);
    console.log(`| test | ${names.join(' | ')} |\n|---|${names.map(() => '---').join('|')}|`);
    for (const id of TESTS)
      console.log(`| ${id} | ${names.map((model) => (cells.get(`${id}|${model}`) ?? 'not run').replace(/\|/g, '\\|')).join(' | ')} |`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await h.stop();
    await fakes.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
