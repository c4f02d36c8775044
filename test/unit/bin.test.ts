import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * bin/tollgate (the package's bin, what `npm start` runs) in a copy of the package's layout
 * whose dist/src/main.js prints what node was started with: the memory settings, the caller's
 * arguments, and through a symbolic link as npm installs bins.
 */
test("bin/tollgate starts node with the memory settings, the caller's glibc tunables last, TOLLGATE_NODE_FLAGS in place of ours, and passes the arguments", () => {
  const root = mkdtempSync(join(tmpdir(), 'tollgate-bin-'));
  try {
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'dist', 'src'), { recursive: true });
    copyFileSync(join(__dirname, '..', '..', 'bin', 'tollgate'), join(root, 'bin', 'tollgate'));
    writeFileSync(
      join(root, 'dist', 'src', 'main.js'),
      'console.log(JSON.stringify({ execArgv: process.execArgv, args: process.argv.slice(2), tunables: process.env.GLIBC_TUNABLES }));\n',
    );
    symlinkSync(join(root, 'bin', 'tollgate'), join(root, 'linked'));
    const out = execFileSync(join(root, 'linked'), ['admin', 'list-plans'], {
      env: { PATH: process.env.PATH, GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' },
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({
      execArgv: [
        '--max-semi-space-size=8',
        '--heap-growing-percent=50',
        '--v8-pool-size=2',
        '--no-allocation-site-pretenuring',
        '--liftoff-only',
      ],
      args: ['admin', 'list-plans'],
      tunables: 'glibc.malloc.mmap_threshold=4194304:glibc.malloc.trim_threshold=1048576:glibc.malloc.hugetlb=1:glibc.malloc.arena_max=2',
    });
    // The operator's own V8 flags replace ours; empty: V8's defaults.
    const run = (flags: string) =>
      JSON.parse(
        execFileSync(join(root, 'linked'), ['start'], { env: { PATH: process.env.PATH, TOLLGATE_NODE_FLAGS: flags }, encoding: 'utf8' }),
      ) as { execArgv: string[] };
    expect(run('').execArgv).toEqual([]);
    expect(run('--max-semi-space-size=16 --max-old-space-size=512').execArgv).toEqual([
      '--max-semi-space-size=16',
      '--max-old-space-size=512',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
