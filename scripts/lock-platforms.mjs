// The registry mirror reachable here serves only some platform builds of native packages
// (for example no darwin/win32 @swc/core), so `npm install` leaves them out of
// package-lock.json and `npm ci` then refuses the lockfile as out of sync. This records each
// missing optional platform package as an os/cpu-restricted optional entry, which `npm ci`
// skips on every other platform. Run after `npm install` changes the lockfile.
import { readFileSync, writeFileSync } from 'node:fs';

const OSES = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPUS = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'loong64', 'riscv64', 'wasm32', 'mips64el'];

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (lock.packages[target] || lock.packages[`${path}/${target}`]) continue;
    const tokens = name.split('/').pop().split('-');
    const os = OSES.find((o) => tokens.includes(o));
    const cpu = CPUS.find((c) => tokens.includes(c));
    if (!os || !cpu) throw new Error(`cannot tell the platform of ${name}`);
    const libc = tokens.some((t) => t.startsWith('musl')) ? ['musl'] : os === 'linux' ? ['glibc'] : undefined;
    lock.packages[target] = { version, cpu: [cpu], os: [os], ...(libc ? { libc } : {}), optional: true };
    added++;
  }
}
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
console.log(`lock-platforms: recorded ${added} platform-only optional packages`);
