import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirectoryInUseError, livePostmaster, lockDataDirectory } from '../../src/infra/postgres-process';

/** The embedded data directory's lock and the leftover server check touch only what is theirs. */
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tollgate-pgproc-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

test('a live process holding the directory keeps it; a dead one, or this very process, loses it', () => {
  writeFileSync(join(root, 'tollgate.pid'), `${process.ppid}\n`); // alive, and not us
  expect(() => lockDataDirectory(root)).toThrow(DataDirectoryInUseError);
  expect(() => lockDataDirectory(root)).toThrow(`Another Tollgate (pid ${process.ppid}) is using the data directory ${root}`);

  writeFileSync(join(root, 'tollgate.pid'), '999999999\n'); // no such process
  const release = lockDataDirectory(root);
  expect(readFileSync(join(root, 'tollgate.pid'), 'utf8')).toBe(`${process.pid}\n`);
  release();
  expect(() => readFileSync(join(root, 'tollgate.pid'))).toThrow();

  writeFileSync(join(root, 'tollgate.pid'), `${process.pid}\n`); // a restarted container can get its old pid back
  lockDataDirectory(root)();
});

test('a postmaster.pid naming a live process that is not a postgres of this directory is not a server to stop', () => {
  const pgdata = join(root, 'pgdata');
  mkdirSync(pgdata);
  // The pid of a crashed server, now someone else's (here: this test runner).
  writeFileSync(join(pgdata, 'postmaster.pid'), `${process.pid}\n${pgdata}\n1700000000\n54321\n`);
  expect(livePostmaster(pgdata)).toBeNull();
});
