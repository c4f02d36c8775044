import { readFileSync, writeFileSync } from 'node:fs';
import type { Client } from 'pg';

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

/** CPU (ms) of each backend connected to the client's database, by pid (a connection may come or go between two readings): the bench database's share of a shared server. */
export async function backendsCpu(monitor: Client): Promise<Map<number, number>> {
  const { rows } = await monitor.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const { user, system } = cpuMs(pid);
      cpu.set(pid, user + system);
    } catch {
      // gone between the query and the read
    }
  }
  return cpu;
}

/** CPU spent between two backendsCpu readings (a backend that came in between counts whole). */
export const cpuSince = (before: Map<number, number>, after: Map<number, number>): number =>
  [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);
