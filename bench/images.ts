/**
 * `npm run bench:images`: 20 concurrent 4-image edits, each with a 4 MB upload, through
 * Tollgate against a fake OpenAI Images upstream in its own process; and, alternating, the same
 * upload sent directly to the upstream as one edit of one image (its vendor time). Reports the latency Tollgate adds (through − direct, per percentile) and the gateway's
 * resident memory: before, and its peak (VmHWM). Billing and admission limits are on.
 *
 * Run by `npm run bench` after the text scenarios (BENCH_IMAGES=0: not), or alone with
 * `npm run bench:images`. Knobs: DATABASE_URL (a scratch database is created and dropped), BENCH_ROUNDS (rounds of 20
 * concurrent requests per side, default 5), BENCH_CONCURRENCY (default 20), BENCH_UPLOAD_MB
 * (default 4), BENCH_IMAGE_VENDOR_MS (the fake's time per image, default 200).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import sharp from 'sharp';
import { cpuMs, residentMb } from './proc';
import { ADMIN_TOKEN, benchDatabase, provisionKey } from './provision';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const UPLOAD_MB = Number(process.env.BENCH_UPLOAD_MB ?? 4);
const IMAGES_PER_REQUEST = 4;
const REGISTER = join(__dirname, '..', 'test', 'support', 'swc-register.js');

function spawnChild<T>(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; message: T }> {
  const child = fork(join(__dirname, script), [], {
    execArgv: ['-r', REGISTER],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve({ child, message: message as T }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/** A PNG of about `mb` MB: noise does not compress, so the file is as large as its pixels. */
async function uploadOf(mb: number): Promise<Buffer> {
  const side = Math.round(Math.sqrt((mb * 1024 * 1024) / 3));
  return sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

function editForm(model: string, n: number, upload: Buffer): FormData {
  const form = new FormData();
  form.append('model', model);
  form.append('prompt', 'make it a watercolour');
  form.append('n', String(n));
  form.append('size', '1024x1024');
  form.append('image', new Blob([upload], { type: 'image/png' }), 'upload.png');
  return form;
}

async function timed(send: () => Promise<Response>): Promise<number> {
  const started = performance.now();
  const response = await send();
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`answered ${response.status}`);
  return performance.now() - started;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  // `npm run bench` ends with this scenario; BENCH_IMAGES=0 leaves it out, and so does a scenario run alone.
  if (process.env.BENCH_IMAGES === '0' || process.env.BENCH_SUSTAINED === 'only' || process.env.BENCH_CPU === 'only') return;
  const database = await benchDatabase(SERVER_URL);
  const upstream = await spawnChild<{ url: string }>('images-upstream-process.ts', {});
  const gateway = await spawnChild<{ port: number }>('gateway-process.ts', {
    DATABASE_URL: database.url,
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: upstream.message.url,
    TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
  });
  const gatewayUrl = `http://127.0.0.1:${gateway.message.port}`;
  const pid = gateway.child.pid!;
  try {
    const upload = await uploadOf(UPLOAD_MB);
    const keys = await Promise.all(Array.from({ length: CONCURRENCY }, () => provisionKey(gatewayUrl)));
    const through = (i: number) => () =>
      fetch(`${gatewayUrl}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys[i]}` },
        body: editForm('openai/gpt-image-1', IMAGES_PER_REQUEST, upload),
      });
    // Directly: the same upload in one edit call of one image (the vendor's time for one image,
    // and the same bytes from the client). Through Tollgate, the 4 images are 4 such calls in
    // parallel, each sending the upload upstream again: that fan-out is part of what is added.
    const direct = () => () =>
      fetch(`${upstream.message.url}/images/edits`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-bench' },
        body: editForm('gpt-image-1', 1, upload),
      });
    const rssBefore = residentMb(pid, 'VmRSS');
    const samples = { direct: [] as number[], through: [] as number[] };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => timed(through(i)))); // warm-up
    const cpu = { gateway: 0, upstream: 0 };
    const cpuOf = (child: ChildProcess) => {
      const { user, system } = cpuMs(child.pid!);
      return user + system;
    };
    for (let round = 0; round < ROUNDS; round++) {
      samples.direct.push(...(await Promise.all(Array.from({ length: CONCURRENCY }, () => timed(direct())))));
      const before = { gateway: cpuOf(gateway.child), upstream: cpuOf(upstream.child) };
      samples.through.push(...(await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => timed(through(i))))));
      cpu.gateway += cpuOf(gateway.child) - before.gateway;
      cpu.upstream += cpuOf(upstream.child) - before.upstream;
    }
    const peak = residentMb(pid, 'VmHWM');
    const d = samples.direct.sort((x, y) => x - y);
    const t = samples.through.sort((x, y) => x - y);
    const row = (p: number) =>
      `| p${p} | ${percentile(d, p).toFixed(0)} ms | ${percentile(t, p).toFixed(0)} ms | ${(percentile(t, p) - percentile(d, p)).toFixed(0)} ms |`;
    console.log(
      `Image bench ${new Date().toISOString().slice(0, 10)}: ${ROUNDS} rounds of ${CONCURRENCY} concurrent ${IMAGES_PER_REQUEST}-image edits, ${(upload.length / 1048576).toFixed(1)} MB upload each, vendor ${process.env.BENCH_IMAGE_VENDOR_MS ?? 200} ms per image`,
    );
    console.log('| latency | direct (1 image, same upload) | through Tollgate (4 images) | added |\n|---|---|---|---|');
    for (const p of [50, 90, 99]) console.log(row(p));
    const requests = ROUNDS * CONCURRENCY;
    console.log(
      `CPU per request through Tollgate: gateway ${(cpu.gateway / requests).toFixed(0)} ms, upstream fake ${(cpu.upstream / requests).toFixed(0)} ms (its 4 multipart parses and 4 generated PNGs); this machine has ${require('node:os').cpus().length} cores shared with the load generator and PostgreSQL`,
    );
    console.log(
      `gateway RSS: ${rssBefore.toFixed(0)} MB before the load, peak ${peak.toFixed(0)} MB (VmHWM, warm-up included); ${CONCURRENCY} × ${(upload.length / 1048576).toFixed(1)} MB = ${((CONCURRENCY * upload.length) / 1048576).toFixed(0)} MB of uploads in flight per round`,
    );
  } finally {
    gateway.child.disconnect();
    upstream.child.disconnect();
    await new Promise((r) => gateway.child.once('exit', r));
    await database.drop();
  }
}
void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
