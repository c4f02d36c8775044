/**
 * `node -r ./test/support/swc-register.js bench/videos.ts`: video job latencies on one gateway.
 *
 * Starts a gateway on a scratch database (DATABASE_URL names the server), then creates
 * BENCH_VIDEOS (default 100) instant sandbox jobs, BENCH_CONCURRENCY (default 10) at a time,
 * and reports the create answer's latency and the time from create to `completed` (the queue
 * round trip: pg-boss step, vendor "render" of 0 ms, file write, settlement). Then one race of
 * 20 creates with one Idempotency-Key. Reported, never asserted.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestTollgate } from '../test/support/tollgate';
import { provisionVideoAccount } from '../test/support/videos';

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
const VIDEOS = Number(process.env.BENCH_VIDEOS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-videos-'));
  const t = await startTestTollgate({
    env: {
      TOLLGATE_VIDEO_DIR: dir,
      TOLLGATE_SANDBOX_VIDEO_RENDER_MS: '0',
      TOLLGATE_VIDEO_POLL_INITIAL_MS: '20',
      TOLLGATE_VIDEO_POLL_MAX_MS: '100',
    },
  });
  try {
    const { apiKey, accountId } = await provisionVideoAccount(t.url, '100000000');
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${t.url}/v1/videos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const createMs: number[] = [];
    const doneMs: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < VIDEOS) {
        const i = next++;
        const started = performance.now();
        const res = await post({ model: 'sandbox/video', prompt: `bench ${i}`, seconds: 2 });
        createMs.push(performance.now() - started);
        const { id } = (await res.json()) as { id: string };
        for (;;) {
          const video = await t.tollgate.services.videos.get(accountId, id);
          if (video.status === 'completed') break;
          await new Promise((r) => setTimeout(r, 5));
        }
        doneMs.push(performance.now() - started);
      }
    };
    const wall = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const elapsed = performance.now() - wall;
    console.log(`${VIDEOS} sandbox jobs, ${CONCURRENCY} at a time, ${(VIDEOS / (elapsed / 1000)).toFixed(1)} jobs/s`);
    console.log(`create answer   p50 ${ms(percentile(createMs, 50))}  p95 ${ms(percentile(createMs, 95))}`);
    console.log(`create→completed p50 ${ms(percentile(doneMs, 50))}  p95 ${ms(percentile(doneMs, 95))}`);

    const race = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post({ model: 'sandbox/video', prompt: 'race' }, { 'Idempotency-Key': 'bench-race' })),
    );
    console.log(
      `20 racing creates with one key: ${answers.filter((a) => a.status === 202).length} created, ${answers.filter((a) => a.status === 200).length} replays, all answered in ${ms(performance.now() - race)}`,
    );
  } finally {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
