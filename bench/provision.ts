import { randomBytes } from 'node:crypto';
import { scratchDatabase } from '../test/support/database';

/** The operator token every bench gateway is started with. */
export const ADMIN_TOKEN = 'bench-operator-token-0123456789';

export async function postJson(url: string, body: unknown, token?: string): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return response.json();
}

/**
 * A fresh tier-5 account and key. Each through-Tollgate run gets several of them, used in
 * rotation: tier 5 allows 1,000 requests a second and 30,000 a minute per account, which this
 * machine can exceed, and the bench is about the latency of serving requests, not of refusing
 * them (limits are still checked on every request).
 */
export async function provisionKey(gateway: string): Promise<string> {
  const email = `bench-${randomBytes(6).toString('hex')}@example.com`;
  const gql = (query: string, variables: Record<string, unknown>) => postJson(`${gateway}/graphql`, { query, variables }, ADMIN_TOKEN);
  const account = await gql('mutation{createAccount(input:{name:"bench"}){id}}', {});
  const accountId = account.data.createAccount.id;
  await gql('mutation($a:ID!){addFunds(input:{accountId:$a,amountMicro:"900000000000"}){id}}', { a: accountId });
  await gql('mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:5}){tier}}', { a: accountId });
  await gql('mutation($a:ID!,$e:String!){createUser(input:{accountId:$a,email:$e,password:"bench-password"}){id}}', {
    a: accountId,
    e: email,
  });
  const session = await postJson(`${gateway}/v1/auth/sessions`, { email, password: 'bench-password' });
  const key = await postJson(`${gateway}/v1/keys`, { name: 'bench' }, session.token);
  return key.secret;
}

/** A fresh database on the server of `serverUrl` for one bench run, and how to drop it. */
export const benchDatabase = (serverUrl: string) => scratchDatabase(serverUrl, 'tollgate_bench');
