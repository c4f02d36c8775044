import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATION_NAMES } from '../../migrations/names';
import { removeCompiledCli, runTollgate, startTollgateProcess } from '../support/cli';
import { createTestDatabase } from '../support/database';
import { call } from '../support/tollgate';

// Spawned processes on a machine shared with other test files can be slow to start.
jest.setTimeout(120_000);

// `tollgate start` (what npm start runs) as a spawned process, on each way an operator starts it.
afterAll(() => removeCompiledCli());

describe('DATABASE_URL', () => {
  let db: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  test('a fresh empty database: migrated, no demo seeded, a line on creating the first account; SIGTERM exits 0', async () => {
    const gateway = await startTollgateProcess({ DATABASE_URL: db.url, LOG_LEVEL: 'info' });
    expect((await call(`${gateway.url}/readyz`)).status).toBe(200);
    expect(gateway.output()).toContain('This database has no account yet.');
    expect(gateway.output()).toContain('admin create-account');
    expect(gateway.output()).not.toContain('tgk_');
    expect(await gateway.stop()).toBe(0);
    // By `tollgate migrate` in a child process (src/cli/migrate-apart.ts), whose report the start logs.
    expect(gateway.output()).toContain(`"migrations":"Applied ${MIGRATION_NAMES.length} migration(s): ${MIGRATION_NAMES[0]}`);
  });

  test('an already migrated database with an account starts without the first-account line', async () => {
    expect((await runTollgate(['admin', 'create-account', '--name', 'First'], { DATABASE_URL: db.url })).code).toBe(0);
    const gateway = await startTollgateProcess({ DATABASE_URL: db.url, LOG_LEVEL: 'info' });
    expect((await call(`${gateway.url}/readyz`)).status).toBe(200);
    expect(gateway.output()).not.toContain('no account yet');
    expect(await gateway.stop()).toBe(0);
    expect(gateway.output()).not.toContain('"migrations"'); // nothing pending: no child
  });

  test('a migration that fails stops the start with its reason in one line, and nothing listens', async () => {
    const clashing = await createTestDatabase();
    try {
      // A table of the first migration's, already there: the child's `tollgate migrate` fails.
      const client = new Client({ connectionString: clashing.url });
      await client.connect();
      await client.query('CREATE TABLE accounts (id text)');
      await client.end();
      const result = await runTollgate(['start'], { DATABASE_URL: clashing.url, PORT: '0' });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^tollgate: [^\n]*relation "accounts" already exists[^\n]*\n$/);
      expect(result.stdout).not.toContain('listening');
    } finally {
      await clashing.drop();
    }
  });

  test('a database that does not exist yet on a reachable server is created', async () => {
    const url = new URL(db.url);
    url.pathname = `${url.pathname}_new`;
    const gateway = await startTollgateProcess({ DATABASE_URL: url.toString() });
    try {
      expect(gateway.output()).toContain('no account yet');
    } finally {
      expect(await gateway.stop()).toBe(0);
      const admin = new Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${url.pathname.slice(1)} WITH (FORCE)`);
      await admin.end();
    }
  });
});

test.each([
  [{ DATABASE_URL: 'mysql://localhost/db' }, 'tollgate: Configuration error: DATABASE_URL must be a postgres:// URL'],
  [
    { DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/tollgate' },
    'tollgate: cannot connect to PostgreSQL at postgres://postgres:***@127.0.0.1:1/tollgate: connect ECONNREFUSED 127.0.0.1:1 (check DATABASE_URL)',
  ],
  [
    { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x', PORT: 'http' },
    "tollgate: Configuration error: PORT must be an integer from 0 to 65535, got 'http'",
  ],
  [
    { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x', OPENAI_BASE_URL: 'api.openai.com' },
    "tollgate: Configuration error: OPENAI_BASE_URL must be an http:// or https:// URL, got 'api.openai.com'",
  ],
  [
    { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x', TOLLGATE_LIMITS_FILE: '/nonexistent/limits.json' },
    'tollgate: Configuration error: TOLLGATE_LIMITS_FILE /nonexistent/limits.json: cannot be read: ENOENT',
  ],
])('a bad value stops the start with one line: %j', async (env, message) => {
  const result = await runTollgate(['start'], { PORT: '0', ...env });
  expect(result.code).toBe(1);
  expect(result.stderr).toBe(`${message}\n`);
  expect(result.stdout).toBe('');
});

test('a port already in use stops the start with one line naming PORT', async () => {
  const db = await createTestDatabase();
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  try {
    const port = (busy.address() as AddressInfo).port;
    const result = await runTollgate(['start'], { DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `tollgate: port ${port} on 127.0.0.1 is already in use (by another Tollgate?): stop it, or set PORT to a free port\n`,
    );
  } finally {
    busy.close();
    await db.drop();
  }
});

describe('the embedded default', () => {
  // The embedded server runs as the `postgres` OS user when we are root: the directory must be reachable.
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-embedded-'));
  chmodSync(dataDir, 0o755);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test('first start seeds and prints the demo; admin commands reach the running server; the next start points at the credentials', async () => {
    const env = { TOLLGATE_DATA_DIR: dataDir };
    const first = await startTollgateProcess(env, { timeoutMs: 120_000 });
    try {
      expect(first.output()).toContain('First start: seeded a demo account');
      const key = /API key:\s+(tgk_\S+)/.exec(first.output())?.[1];
      const models = await call(`${first.url}/v1/models`, { token: key });
      expect(models.status).toBe(200);
      const listed = await runTollgate(['admin', 'list-accounts', '--json'], env);
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'Demo account', balance_micro: '25000000' })]);

      // SIGTERM while a stream is being served: the drain finishes it and settles it before the
      // embedded server stops, and the process exits 0 (the library's own signal hooks would
      // stop the database under it and exit 143).
      const streamed = await fetch(`${first.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'sandbox/echo',
          stream: true,
          messages: [{ role: 'user', content: '[sandbox:delay=150] Tell me about lighthouses.' }],
        }),
      });
      expect(streamed.status).toBe(200);
      const reader = streamed.body!.getReader();
      let body = new TextDecoder().decode((await reader.read()).value);
      const exitCode = first.stop();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) body += new TextDecoder().decode(chunk.value);
      expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(await exitCode).toBe(0);
    } catch (error) {
      await first.stop();
      throw error;
    }
    const second = await startTollgateProcess({ ...env, LOG_LEVEL: 'info' }, { timeoutMs: 120_000, detached: true });
    let balanceBefore: bigint;
    try {
      expect(second.output()).toContain(`Demo account (credentials in ${dataDir}/demo-credentials.json)`);
      // The stream cut short by nothing was charged, and nothing is left reserved.
      const after = await runTollgate(['admin', 'list-accounts', '--json'], env);
      const [account] = JSON.parse(after.stdout) as Array<{ balance_micro: string; reserved_micro: string }>;
      balanceBefore = BigInt(account!.balance_micro);
      expect(balanceBefore).toBeLessThan(25_000_000n);
      expect(account!.reserved_micro).toBe('0');

      // A second start on the same data directory says who holds it, and leaves it alone.
      const third = await runTollgate(['start'], { ...env, PORT: '0' });
      expect(third.code).toBe(1);
      expect(third.stderr).toBe(
        `tollgate: Another Tollgate (pid ${second.child.pid}) is using the data directory ${dataDir}: stop it first, or give this one another TOLLGATE_DATA_DIR or a DATABASE_URL.\n`,
      );
    } catch (error) {
      await second.stop();
      throw error;
    }

    // Ctrl-C in a terminal signals the whole process group: the embedded server runs in a
    // session of its own, so the stream in flight still finishes and is charged; the log says
    // in one line what stopped, with no error and no database client in it.
    const key = /API key:\s+(tgk_\S+)/.exec(second.output())?.[1];
    const streamed = await fetch(`${second.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sandbox/echo',
        stream: true,
        messages: [{ role: 'user', content: '[sandbox:delay=150] Tell me about harbours.' }],
      }),
    });
    const reader = streamed.body!.getReader();
    let body = new TextDecoder().decode((await reader.read()).value);
    const exitCode = second.interrupt();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) body += new TextDecoder().decode(chunk.value);
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await exitCode).toBe(0);
    const lines = second
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg?: string });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(second.output()).not.toMatch(/processID|secretKey|"client"/);
    expect(lines.filter((line) => line.msg?.startsWith('stopped'))).toEqual([
      expect.objectContaining({
        level: 30,
        signal: 'SIGINT',
        msg: 'stopped: requests drained; video workers, database connections and the embedded PostgreSQL closed',
      }),
    ]);
    expect(lines.at(-1)!.msg).toMatch(/^stopped/);
    const final = await runTollgate(['admin', 'list-accounts', '--json'], env);
    const [settled] = JSON.parse(final.stdout) as Array<{ balance_micro: string; reserved_micro: string }>;
    expect(BigInt(settled!.balance_micro)).toBeLessThan(balanceBefore!);
    expect(settled!.reserved_micro).toBe('0');
  }, 240_000);

  test('after a kill -9 the embedded server left running is stopped by the next start, which then serves', async () => {
    const env = { TOLLGATE_DATA_DIR: dataDir };
    const killed = await startTollgateProcess(env, { timeoutMs: 120_000 });
    const pidFile = join(dataDir, 'pgdata', 'postmaster.pid');
    const orphan = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    killed.child.kill('SIGKILL');
    await new Promise((resolve) => killed.child.once('exit', resolve));
    expect(() => process.kill(orphan, 0)).not.toThrow(); // its server lives on, in a session of its own
    const next = await startTollgateProcess(env, { timeoutMs: 120_000 });
    try {
      expect(() => process.kill(orphan, 0)).toThrow();
      expect((await call(`${next.url}/readyz`)).status).toBe(200);
    } finally {
      expect(await next.stop()).toBe(0);
    }
  }, 240_000);
});
