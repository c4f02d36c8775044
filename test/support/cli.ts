import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'src', 'main.ts');
const REGISTER = join(__dirname, 'swc-register.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a spawned Tollgate sees: only what the test gives (plus PATH), never the runner's DATABASE_URL. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env };
}

/** Runs `tollgate <args>` (src/main.ts through SWC) to completion. */
export function runTollgate(args: string[], env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', REGISTER, MAIN, ...args], { cwd: options.cwd ?? ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
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
}

/** Starts `tollgate start` and resolves once it prints that it listens (rejects if it exits first). */
export function startTollgateProcess(env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<RunningTollgate> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', REGISTER, MAIN, 'start'], { cwd: options.cwd ?? ROOT, env: childEnv({ PORT: '0', HOST: '127.0.0.1', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
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
