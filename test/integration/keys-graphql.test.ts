import { createClient, type Client } from 'graphql-ws';
import { Client as PgClient } from 'pg';
import WebSocket from 'ws';
import {
  ADMIN_TOKEN,
  call,
  createKey,
  graphql,
  provisionAccount,
  startTestTollgate,
  waitForSubscriptions,
  type TestTollgate,
} from '../support/tollgate';

let t: TestTollgate;
let owner: Awaited<ReturnType<typeof provisionAccount>>;
let other: Awaited<ReturnType<typeof provisionAccount>>;

beforeAll(async () => {
  t = await startTestTollgate();
  owner = await provisionAccount(t.url, { fundsMicro: '60000000', plan: 'starter' });
  other = await provisionAccount(t.url);
});
afterAll(async () => t?.stop());

const KEY_FIELDS = 'id name kind prefix createdAt lastUsedAt expiresAt revokedAt monthlySpendLimitMicro monthSpentMicro';

test('signIn, me and account', async () => {
  const signIn = await graphql(t.url, 'mutation($e:String!,$p:String!){signIn(email:$e,password:$p){token expiresAt}}', {
    e: owner.email,
    p: owner.password,
  });
  const token = signIn.data.signIn.token;
  expect(token).toMatch(/^tgs_/);
  expect(new Date(signIn.data.signIn.expiresAt).getTime()).toBeGreaterThan(Date.now());
  const me = await graphql(
    t.url,
    '{ me { id email plan accountId } account { id balanceMicro reservedMicro availableMicro lifetimeTopUpsMicro tier tierLimits { requestsPerMinute tokensPerMinute concurrentRequests } } }',
    {},
    token,
  );
  expect(me.errors).toBeUndefined();
  expect(me.data.me).toEqual({ id: owner.userId, email: owner.email, plan: 'starter', accountId: owner.accountId });
  // $60 of lifetime top-ups is tier 2 (from $50).
  expect(me.data.account).toMatchObject({
    id: owner.accountId,
    balanceMicro: '60000000',
    reservedMicro: '0',
    availableMicro: '60000000',
    tier: 2,
  });
  expect(me.data.account.tierLimits).toEqual({ requestsPerMinute: 500, tokensPerMinute: 1000000, concurrentRequests: 20 });
  const out = await graphql(t.url, 'mutation{signOut}', {}, token);
  expect(out.data.signOut).toBe(true);
  const after = await graphql(t.url, '{ me { id } }', {}, token);
  expect(after.errors?.[0].extensions.code).toBe('invalid_token');
});

test('key lifecycle mirrors REST and events are shared by both APIs', async () => {
  const created = await graphql(
    t.url,
    `mutation{createKey(input:{name:"gql", monthlySpendLimitMicro:"3000000"}){secret key{${KEY_FIELDS}}}}`,
    {},
    owner.sessionToken,
  );
  expect(created.errors).toBeUndefined();
  const key = created.data.createKey.key;
  expect(key).toMatchObject({ name: 'gql', kind: 'prepaid', monthlySpendLimitMicro: '3000000', monthSpentMicro: '0', revokedAt: null });
  expect(created.data.createKey.secret.slice(0, 12)).toBe(key.prefix);

  const renamed = await graphql(
    t.url,
    'mutation($id:ID!){updateKey(id:$id,input:{name:"gql2"}){name monthlySpendLimitMicro}}',
    { id: key.id },
    owner.sessionToken,
  );
  expect(renamed.data.updateKey).toEqual({ name: 'gql2', monthlySpendLimitMicro: '3000000' });
  const unlimited = await graphql(
    t.url,
    'mutation($id:ID!){updateKey(id:$id,input:{monthlySpendLimitMicro:null}){name monthlySpendLimitMicro}}',
    { id: key.id },
    owner.sessionToken,
  );
  expect(unlimited.data.updateKey).toEqual({ name: 'gql2', monthlySpendLimitMicro: null });
  const revoked = await graphql(t.url, 'mutation($id:ID!){revokeKey(id:$id){revokedAt}}', { id: key.id }, owner.sessionToken);
  expect(revoked.data.revokeKey.revokedAt).toEqual(expect.any(String));

  // A revoked key is not changed any more: 409 key_revoked, no event written.
  const late = await graphql(
    t.url,
    'mutation($id:ID!){updateKey(id:$id,input:{name:"gql3", monthlySpendLimitMicro:"9000000"}){name}}',
    { id: key.id },
    owner.sessionToken,
  );
  expect(late.errors?.[0].extensions).toMatchObject({ code: 'key_revoked', status: 409 });

  const events = await graphql(
    t.url,
    'query($k:ID!){keyEvents(keyId:$k, first: 10){data{kind keyId actorUserId data} hasMore firstId lastId}}',
    { k: key.id },
    owner.sessionToken,
  );
  expect(events.data.keyEvents.data.map((e: { kind: string }) => e.kind)).toEqual(['revoked', 'spend_limit_changed', 'renamed', 'created']);
  expect(events.data.keyEvents.data[1].data).toEqual({ old_limit_micro: '3000000', new_limit_micro: null });
  expect(events.data.keyEvents.data[0].actorUserId).toBe(owner.userId);
  const rest = await call(`${t.url}/v1/keys/${key.id}/events`, { token: owner.sessionToken });
  expect(rest.body.data.map((e: { id: string }) => e.id)).toEqual(
    events.data.keyEvents.data.map((_: unknown, i: number) => rest.body.data[i].id),
  );
  expect(rest.body.data).toHaveLength(4);

  const keys = await graphql(t.url, `{ keys { id } key(id: "${key.id}") { name } }`, {}, owner.sessionToken);
  expect(keys.data.keys.map((k: { id: string }) => k.id)).toContain(key.id);
  expect(keys.data.key.name).toBe('gql2');
});

test('GraphQL refusals carry the error codes and name the field', async () => {
  const bad = await graphql(t.url, 'mutation{createKey(input:{name:"x", monthlySpendLimitMicro:"5"}){secret}}', {}, owner.sessionToken);
  expect(bad.errors?.[0].extensions.code).toBe('bad_request');
  // The message speaks the person's units (the dashboard shows it); details name the input field.
  expect(bad.errors?.[0]).toMatchObject({
    message: 'Monthly limit must be between $1 and $100,000',
    extensions: { details: { field: 'input.monthlySpendLimitMicro' } },
  });

  const apiKey = await createKey(t.url, owner.sessionToken);
  const withKey = await graphql(t.url, '{ keys { id } }', {}, apiKey.secret);
  expect(withKey.errors?.[0].extensions.code).toBe('session_required');
  const anonymous = await graphql(t.url, '{ keys { id } }');
  expect(anonymous.errors?.[0].extensions.code).toBe('invalid_token');

  const sessionAsOperator = await graphql(t.url, 'mutation{createAccount(input:{name:"x"}){id}}', {}, owner.sessionToken);
  expect(sessionAsOperator.errors?.[0].extensions.code).toBe('invalid_token');
  const keyAsOperator = await graphql(t.url, 'mutation{createAccount(input:{name:"x"}){id}}', {}, apiKey.secret);
  expect(keyAsOperator.errors?.[0].extensions.code).toBe('session_required');
  const operatorAsSession = await graphql(t.url, '{ keys { id } }', {}, ADMIN_TOKEN);
  expect(operatorAsSession.errors?.[0].extensions.code).toBe('session_required');

  const foreign = await graphql(t.url, 'mutation($id:ID!){revokeKey(id:$id){id}}', { id: apiKey.id }, other.sessionToken);
  expect(foreign.errors?.[0].extensions.code).toBe('not_found');
  const foreignRead = await graphql(t.url, 'query($id:ID!){key(id:$id){id}}', { id: apiKey.id }, other.sessionToken);
  expect(foreignRead.data.key).toBeNull();

  const funds = await graphql(
    t.url,
    'mutation($a:ID!){addFunds(input:{accountId:$a,amountMicro:"-5"}){id}}',
    { a: owner.accountId },
    ADMIN_TOKEN,
  );
  expect(funds.errors?.[0].extensions.code).toBe('bad_request');
  expect(funds.errors?.[0].extensions.details).toEqual({ field: 'input.amountMicro' });

  // Ledger rows carry no foreign key (migration AppendOnlyAccountRefs): an unknown account is refused before any is written.
  const nowhere = await graphql(
    t.url,
    'mutation($a:ID!){addFunds(input:{accountId:$a,amountMicro:"5"}){id}}',
    { a: 'acct_does_not_exist' },
    ADMIN_TOKEN,
  );
  expect(nowhere.errors?.[0].extensions.code).toBe('not_found');
  const db = new PgClient({ connectionString: t.databaseUrl });
  await db.connect();
  try {
    expect((await db.query(`select count(*)::int as n from ledger_entries where account_id = 'acct_does_not_exist'`)).rows[0].n).toBe(0);
  } finally {
    await db.end();
  }
});

test('operator pins and unpins the tier', async () => {
  const pinned = await graphql(
    t.url,
    'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:4}){tier tierOverride}}',
    { a: owner.accountId },
    ADMIN_TOKEN,
  );
  expect(pinned.data.setAccountTier).toEqual({ tier: 4, tierOverride: 4 });
  const auto = await graphql(
    t.url,
    'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:null}){tier tierOverride}}',
    { a: owner.accountId },
    ADMIN_TOKEN,
  );
  expect(auto.data.setAccountTier).toEqual({ tier: 2, tierOverride: null });
  const bad = await graphql(
    t.url,
    'mutation($a:ID!){setAccountTier(input:{accountId:$a,tier:9}){tier}}',
    { a: owner.accountId },
    ADMIN_TOKEN,
  );
  expect(bad.errors?.[0]).toMatchObject({ message: 'Tier must be one of 1, 2, 3, 4, 5', extensions: { details: { field: 'input.tier' } } });
});

describe('graphql-ws', () => {
  let client: Client;
  afterEach(async () => client?.dispose());

  const connect = (authorization?: string) =>
    createClient({
      url: t.url.replace('http', 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: authorization ? { authorization } : {},
      retryAttempts: 0,
      lazy: true,
    });

  test('a subscriber receives key events live, from REST and GraphQL changes', async () => {
    const key = await createKey(t.url, owner.sessionToken, { name: 'watched' });
    client = connect(`Bearer ${owner.sessionToken}`);
    const received: { kind: string; data: Record<string, unknown> }[] = [];
    const done = new Promise<void>((resolve, reject) => {
      client.subscribe<{ keyEvents: { kind: string; keyId: string; data: Record<string, unknown> } }>(
        { query: 'subscription($k:ID!){keyEvents(keyId:$k){kind keyId data}}', variables: { k: key.id } },
        {
          next: (msg) => {
            if (msg.errors) return reject(new Error(JSON.stringify(msg.errors)));
            received.push(msg.data!.keyEvents);
            if (received.length === 2) resolve();
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    // The subscription is registered asynchronously: change the key once the server listens.
    await waitForSubscriptions(t.url, 1);
    await call(`${t.url}/v1/keys/${key.id}`, { method: 'PATCH', token: owner.sessionToken, body: { name: 'watched-2' } });
    await graphql(t.url, 'mutation($id:ID!){revokeKey(id:$id){id}}', { id: key.id }, owner.sessionToken);
    await done;
    expect(received).toEqual([
      { kind: 'renamed', keyId: key.id, data: { old_name: 'watched', new_name: 'watched-2' } },
      { kind: 'revoked', keyId: key.id, data: {} },
    ]);
  });

  test('subscribing to a foreign key or with an API key is refused', async () => {
    const key = await createKey(t.url, owner.sessionToken);
    for (const [authorization, code] of [
      [`Bearer ${other.sessionToken}`, 'not_found'],
      [`Bearer ${key.secret}`, 'session_required'],
      [undefined, 'invalid_token'],
    ] as const) {
      client = connect(authorization);
      const errors = await new Promise<{ extensions?: { code?: string } }[]>((resolve) => {
        client.subscribe(
          { query: 'subscription($k:ID!){keyEvents(keyId:$k){kind}}', variables: { k: key.id } },
          {
            next: (msg) => msg.errors && resolve(msg.errors as never),
            error: (e) => resolve(Array.isArray(e) ? e : [{ extensions: { code: String(e) } }]),
            complete: () => undefined,
          },
        );
      });
      expect(errors[0].extensions?.code).toBe(code);
      await client.dispose();
    }
  });
});
