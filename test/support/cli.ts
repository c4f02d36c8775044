import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { transformFileSync } from '@swc/core';

const ROOT = join(__dirname, '..', '..');

/**
 * The CLI's sources compiled once per test file with SWC (the options of swc-register.js),
 * like `npm run build` does with tsc: each spawned process then starts without compiling.
 * The output sits inside the checkout (.scratch/, ignored) so node_modules resolves as in dist/.
 */
let compiledMain: string | undefined;
let compiledDir: string | undefined;
function compiledCli(): string {
  if (compiledMain) return compiledMain;
  const out = join(ROOT, '.scratch', `cli-${randomBytes(4).toString('hex')}`);
  compiledDir = out;
  const compile = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) compile(path);
      else if (entry.name.endsWith('.ts')) {
        const { code } = transformFileSync(path, {
          jsc: {
            parser: { syntax: 'typescript', decorators: true },
            transform: { legacyDecorator: true, decoratorMetadata: true },
            target: 'es2022',
          },
          module: { type: 'commonjs' },
        });
        const target = join(out, relative(ROOT, path)).replace(/\.ts$/, '.js');
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, code);
      }
    }
  };
  compile(join(ROOT, 'src'));
  compile(join(ROOT, 'migrations'));
  compiledMain = join(out, 'src', 'main.js');
  return compiledMain;
}

/** For afterAll: removes the compiled sources of this test file. */
export function removeCompiledCli(): void {
  if (compiledDir) rmSync(compiledDir, { recursive: true, force: true });
  compiledDir = compiledMain = undefined;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a spawned Tollgate sees: only what the test gives (plus PATH), never the runner's DATABASE_URL. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env };
}

/** Runs `tollgate <args>` to completion. */
export function runTollgate(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [compiledCli(), ...args], {
      cwd: options.cwd ?? ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tollgate ${args.join(' ')} did not finish; stdout: ${stdout} stderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningTollgate {
  child: ChildProcess;
  url: string;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** A terminal's Ctrl-C: SIGINT to the whole process group (started with `detached`), then the exit code. */
  interrupt(): Promise<number | null>;
}

/** Starts `tollgate start` and resolves once it prints that it listens (rejects if it exits first). */
export function startTollgateProcess(
  env: Record<string, string>,
  options: { cwd?: string; timeoutMs?: number; detached?: boolean } = {},
): Promise<RunningTollgate> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [compiledCli(), 'start'], {
      cwd: options.cwd ?? ROOT,
      env: childEnv({ PORT: '0', HOST: '127.0.0.1', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached ?? false,
    });
    let out = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Tollgate is listening on http:\/\/localhost:(\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({
          child,
          url: `http://127.0.0.1:${match[1]}`,
          output: () => out,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
          interrupt: async () => {
            if (!options.detached) throw new Error('interrupt() needs a process group of its own: start with detached');
            process.kill(-child.pid!, 'SIGINT');
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tollgate start did not listen in time: ${out}`));
    }, options.timeoutMs ?? 60_000);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`tollgate start exited with ${code}: ${out}`));
    });
  });
}
