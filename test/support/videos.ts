import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, call, createKey, graphql, provisionAccount } from './tollgate';

/** Fast job settings for tests: an instant sandbox, short polls, a private video directory. */
export function videoTestEnv(extra: Record<string, string> = {}): { env: Record<string, string>; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-videos-'));
  return {
    env: {
      TOLLGATE_VIDEO_DIR: dir,
      TOLLGATE_SANDBOX_VIDEO_RENDER_MS: '0',
      TOLLGATE_SANDBOX_VIDEO_SLOW_MS: '1500',
      TOLLGATE_VIDEO_POLL_INITIAL_MS: '20',
      TOLLGATE_VIDEO_POLL_MAX_MS: '100',
      ...extra,
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Polls GET /v1/videos/{id} until the job ends (or `status` is reached). */
export async function waitForVideo(
  url: string,
  apiKey: string,
  id: string,
  until: (video: any) => boolean = (v) => v.status === 'completed' || v.status === 'failed',
  timeoutMs = 15_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(`${url}/v1/videos/${id}`, { token: apiKey });
    if (res.status !== 200) throw new Error(`GET video ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    if (until(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`video ${id} still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A funded account on tier 5 (tests poll quickly) with one prepaid key. */
export async function provisionVideoAccount(url: string, fundsMicro = '5000000', tier = 5) {
  const account = await provisionAccount(url, { fundsMicro });
  const pinned = await graphql(
    url,
    'mutation($a:ID!,$t:Int){setAccountTier(input:{accountId:$a,tier:$t}){id}}',
    { a: account.accountId, t: tier },
    ADMIN_TOKEN,
  );
  if (pinned.errors) throw new Error(JSON.stringify(pinned.errors));
  const key = await createKey(url, account.sessionToken);
  return { ...account, apiKey: key.secret, keyId: key.id };
}
