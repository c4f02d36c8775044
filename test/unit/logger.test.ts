import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { createLogger, serializeError, withErrorSerializer } from '../../src/infra/logger';
import pino from 'pino';

/** A pg error as the driver emits it when the server ends a connection: it carries its client. */
function pgErrorWithClient(): Error {
  const client = new Client({ connectionString: 'postgres://postgres:hunter2@127.0.0.1:1/tollgate' });
  (client as unknown as { processID: number; secretKey: number }).processID = 4242;
  (client as unknown as { processID: number; secretKey: number }).secretKey = 987654321;
  return Object.assign(new Error('terminating connection due to administrator command'), {
    code: '57P01',
    severity: 'FATAL',
    detail: 'Key (email)=(someone@example.com)',
    client,
  });
}

function capture(make: (stream: Writable) => pino.Logger): { log: pino.Logger; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { log: make(stream), lines: () => chunks.join('').split('\n').filter(Boolean) };
}

describe('an error in a log line', () => {
  test('shows its type, message, code and stack, never its other properties (a driver client, row values)', () => {
    const shown = serializeError(pgErrorWithClient()) as Record<string, unknown>;
    expect(Object.keys(shown).sort()).toEqual(['code', 'message', 'stack', 'type']);
    expect(shown).toMatchObject({ type: 'Error', message: 'terminating connection due to administrator command', code: '57P01' });
  });

  test.each([
    ['the gateway logger', (stream: Writable) => createLogger('info', stream)],
    ['a logger handed to the gateway', (stream: Writable) => withErrorSerializer(pino({ level: 'info' }, stream))],
  ])('%s writes a line without the client or its secret key', (_name, make) => {
    const { log, lines } = capture(make);
    log.error({ err: pgErrorWithClient() }, 'video queue error');
    const [line] = lines();
    expect(line).not.toMatch(/secretKey|processID|987654321|hunter2|someone@example.com/);
    expect(JSON.parse(line!).err).toMatchObject({ code: '57P01' });
  });

  test('a thrown non-Error object is named, not dumped; a cause keeps its message', () => {
    expect(serializeError({ client: { secretKey: 1 } })).toEqual({ type: 'object', message: 'a value that is not an Error was thrown' });
    expect(serializeError('plain message')).toBe('plain message');
    const wrapped = new Error('outer', { cause: pgErrorWithClient() });
    expect((serializeError(wrapped) as { cause: Record<string, unknown> }).cause).not.toHaveProperty('client');
  });
});

describe('the gateway logger on standard output', () => {
  /**
   * A child process logs to its standard output, a file here, and reports the file's size after
   * each step (the lines it has written so far); then the whole file is read.
   */
  function logInChild(): { sizes: Record<string, number>; lines: { level: number; msg: string }[] } {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-log-'));
    const out = join(dir, 'stdout');
    const fd = openSync(out, 'w');
    const script = `
      const { fstatSync } = require('node:fs');
      const { createLogger } = require(${JSON.stringify(join(__dirname, '..', '..', 'src', 'infra', 'logger.ts'))});
      const log = createLogger('info');
      const size = () => fstatSync(1).size;
      const sizes = {};
      log.info('one request');
      sizes.afterInfo = size();
      log.warn('a failed stream');
      sizes.afterWarn = size();
      log.info('another request');
      sizes.nextInfo = size();
      setTimeout(() => {
        sizes.later = size();
        log.info('the last request');
        process.stderr.write(JSON.stringify(sizes));
        process.exit(0);
      }, 400);`;
    try {
      const child = spawnSync(process.execPath, ['-r', join(__dirname, '..', 'support', 'swc-register.js'), '-e', script], {
        stdio: ['ignore', fd, 'pipe'],
      });
      if (child.status !== 0) throw new Error(`the child failed: ${String(child.stderr)}`);
      const lines = readFileSync(out, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      return { sizes: JSON.parse(String(child.stderr)), lines };
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('info lines wait briefly to share a write; a warning goes at once, after them; nothing is lost at exit', () => {
    const { sizes, lines } = logInChild();
    expect(sizes.afterInfo).toBe(0);
    expect(sizes.afterWarn).toBeGreaterThan(0);
    expect(sizes.nextInfo).toBe(sizes.afterWarn);
    // Written within the flush interval though nothing else was logged.
    expect(sizes.later).toBeGreaterThan(sizes.afterWarn!);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [30, 'one request'],
      [40, 'a failed stream'],
      [30, 'another request'],
      [30, 'the last request'],
    ]);
  });
});
