import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time a process of this machine has used (user, system), in ms, from /proc. */
export function cpuMs(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: (Number(fields[11]) * 1000) / CLOCK_TICKS_PER_SECOND, system: (Number(fields[12]) * 1000) / CLOCK_TICKS_PER_SECOND };
}

/** Resident memory of a process of this machine, in MB: now (VmRSS) or its peak so far (VmHWM). */
export function residentMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Linux: writing 5 to clear_refs starts the peak (VmHWM) over from the current resident size. */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** CPU time (ms) of every PostgreSQL process this user can see (/proc), to count the database's share per request. */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.split(') ')[1]!.split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    } catch {
      // the process ended between readdir and read
    }
  }
  return total;
}
