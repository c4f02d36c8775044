/**
 * What the client scenarios share (scripts/clients/*.mjs, run by worker.mjs under the clients'
 * Node 22): loading a client from the clients folder, checking an answer, running a CLI client.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The clients folder (.clients/ of the checkout unless --clients-dir said otherwise). */
export const clientsDir = process.env.CLIENTS_DIR;

/** Imports a package installed in the clients folder (never this repository's own copy). */
export const load = (name) => import(pathToFileURL(createRequire(join(clientsDir, 'package.json')).resolve(name)).href);

/** A client's executable in the clients folder. */
export const bin = (name) => join(clientsDir, 'node_modules', '.bin', name);

/** The prompt the sandbox answers with a call of the weather tool it is offered (docs/text.md, The sandbox vendor). */
export const WEATHER = 'What is the weather like in Paris?';

/** Checks that `text` holds `part`; answers the line holding it, as the table shows the result. */
export function expectIncludes(text, part) {
  const all = String(text);
  if (!all.includes(part)) throw new Error(`expected ${JSON.stringify(part)} in ${JSON.stringify(all.slice(-300))}`);
  return all
    .split('\n')
    .find((line) => line.includes(part))
    .trim()
    .slice(0, 80);
}

export function ok(condition, what) {
  if (!condition) throw new Error(`expected ${what}`);
}

/** Runs a CLI client with stdin closed (Codex reads more input from an open one); its exit code and output, whatever the exit. */
export function runCli(command, args, { env, cwd, timeoutMs = 180_000 }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, all: `${stdout}\n${stderr}` });
    });
  });
}
