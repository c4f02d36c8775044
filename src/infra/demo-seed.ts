import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Account } from '../domain/accounts/entities';
import { randomToken } from '../domain/shared/secrets';
import type { Services } from '../server';

export interface DemoCredentials {
  account_id: string;
  email: string;
  password: string;
  session_token: string;
  api_key: string;
}

export const DEMO_CREDIT_MICRO = 25_000_000n; // $25 of sandbox credit

/**
 * First start only (no account exists yet): a demo account funded with sandbox credit, a demo
 * user on the `pro` plan, a session and a prepaid API key. The secrets are written to
 * `<dataDir>/demo-credentials.json` (mode 0600) so later starts can point at them.
 */
export async function seedDemoOnFirstStart(services: Services, dataDir: string): Promise<DemoCredentials | null> {
  const accounts = await services.orm.em.fork().count(Account, {});
  if (accounts > 0) return null;
  const account = await services.accounts.createAccount('Demo account');
  await services.accounts.addFunds(account.id, DEMO_CREDIT_MICRO);
  const email = 'demo@tollgate.local';
  const password = randomToken(16);
  const user = await services.accounts.createUser({ accountId: account.id, email, password, plan: 'pro' });
  const { token, session } = await services.auth.createSession(user.id, account.id);
  const { secret } = await services.keys.createKey(session, {
    name: 'Demo key',
    kind: 'prepaid',
    monthlySpendLimitMicro: null,
    expiresAt: null,
  });
  const credentials: DemoCredentials = { account_id: account.id, email, password, session_token: token, api_key: secret };
  await writeFile(join(dataDir, 'demo-credentials.json'), JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  return credentials;
}

export async function readDemoCredentials(dataDir: string): Promise<DemoCredentials | null> {
  const file = join(dataDir, 'demo-credentials.json');
  return existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as DemoCredentials) : null;
}
