import fc from 'fast-check';
import { gzipSync } from 'node:zlib';

/**
 * Malformed requests for every endpoint, as fast-check arbitraries. A request is described as
 * data (so a failure shrinks to a small, readable counterexample) and sent raw by the runner.
 */

export type Credential = 'key' | 'session' | 'operator' | 'none' | 'garbage';

export interface Endpoint {
  method: string;
  /** `{id}` is replaced by an id-like or hostile value. */
  path: string;
  credential: Credential;
  /** A valid body, mutated field by field; absent for bodiless endpoints. */
  body?: Record<string, unknown>;
  /** Whether a 2xx answer is charged (a model-taking request). */
  charged?: boolean;
  /** The body travels as multipart/form-data (its fields, plus image files). */
  multipart?: boolean;
}

const user = [{ role: 'user', content: 'fuzz' }];

/** Every route the gateway serves (extend with each new one). */
export const ENDPOINTS: Endpoint[] = [
  {
    method: 'POST',
    path: '/v1/chat/completions',
    credential: 'key',
    body: { model: 'sandbox/echo', messages: user, max_tokens: 16 },
    charged: true,
  },
  {
    method: 'POST',
    path: '/v1/responses',
    credential: 'key',
    body: { model: 'sandbox/echo', input: 'fuzz', max_output_tokens: 16 },
    charged: true,
  },
  {
    method: 'POST',
    path: '/v1/messages',
    credential: 'key',
    body: { model: 'sandbox/echo', max_tokens: 16, messages: user },
    charged: true,
  },
  {
    method: 'POST',
    path: '/v1/images/generations',
    credential: 'key',
    body: { model: 'sandbox/image', prompt: 'fuzz', n: 1, size: '512x512' },
    charged: true,
  },
  {
    method: 'POST',
    path: '/v1/images/edits',
    credential: 'key',
    body: { model: 'sandbox/image', prompt: 'fuzz', size: '512x512' },
    charged: true,
    multipart: true,
  },
  { method: 'POST', path: '/v1/videos', credential: 'key', body: { model: 'sandbox/video', prompt: 'fuzz', seconds: 2 }, charged: true },
  {
    method: 'POST',
    path: '/v1/videos',
    credential: 'key',
    body: { model: 'sandbox/video', prompt: 'fuzz', seconds: '2' },
    charged: true,
    multipart: true,
  },
  { method: 'GET', path: '/v1/videos?limit=2', credential: 'key' },
  { method: 'GET', path: '/v1/videos/{id}', credential: 'key' },
  { method: 'GET', path: '/v1/videos/{id}/content', credential: 'key' },
  { method: 'GET', path: '/v1/models', credential: 'key' },
  { method: 'GET', path: '/v1/images/models', credential: 'key' },
  { method: 'GET', path: '/v1/videos/models', credential: 'key' },
  { method: 'POST', path: '/v1/auth/sessions', credential: 'none', body: { email: 'nobody@example.com', password: 'wrong password' } },
  // Sign-out is fuzzed with other credentials only: the run's own session must survive it.
  { method: 'DELETE', path: '/v1/auth/sessions/current', credential: 'garbage' },
  { method: 'GET', path: '/v1/keys', credential: 'session' },
  { method: 'POST', path: '/v1/keys', credential: 'session', body: { name: 'fuzz', monthly_spend_limit_micro: '1000000' } },
  { method: 'GET', path: '/v1/keys/{id}', credential: 'session' },
  { method: 'PATCH', path: '/v1/keys/{id}', credential: 'session', body: { name: 'renamed', monthly_spend_limit_micro: null } },
  { method: 'DELETE', path: '/v1/keys/{id}', credential: 'session' },
  { method: 'GET', path: '/v1/keys/{id}/events?limit=5', credential: 'session' },
  {
    method: 'POST',
    path: '/graphql',
    credential: 'session',
    body: { query: '{ account { id balanceMicro } keys { id name } }', variables: {} },
  },
  {
    method: 'POST',
    path: '/graphql',
    credential: 'operator',
    body: { query: 'mutation($n:String!){ createAccount(input:{name:$n}) { id } }', variables: { n: 'fuzz' } },
  },
  { method: 'GET', path: '/v1/openapi.json', credential: 'none' },
  { method: 'GET', path: '/metrics', credential: 'operator' },
  { method: 'GET', path: '/healthz', credential: 'none' },
  { method: 'GET', path: '/readyz', credential: 'none' },
];

export interface FuzzRequest {
  endpoint: number;
  method: string;
  path: string;
  credential: Credential;
  /** Header name → value(s); an array sends the header more than once. */
  headers: Record<string, string | string[]>;
  body: Buffer | null;
  /** What the mutation was, for the report. */
  mutation: string;
}

// ---- values ------------------------------------------------------------------------------

const unicodeEdge = fc.constantFrom(
  '\u0000',
  '\ud800',
  '\udfff',
  '\u202e',
  '\u2066',
  '\ufeff',
  '\u200b',
  '\uffff',
  '\u{10ffff}',
  'é',
  '𝕏',
  '\r\n',
  '\\',
  '"',
  "'",
);
const edgyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.array(unicodeEdge, { minLength: 1, maxLength: 12 }).map((parts) => parts.join('')),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'sandbox/echo',
    'openai/gpt-4o-mini',
    '',
    ' ',
    'null',
    'NaN',
    '-0',
    '1e309',
  ),
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => 'x'.repeat(n)),
);
const hugeNumber = fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 2 ** 64, 0.1, -1, 0, -0, 1e-300, 4096.5);
const nested = fc.integer({ min: 10, max: 3_000 }).chain((depth) =>
  fc.constantFrom('array', 'object').map((kind) => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
    return value;
  }),
);
const prototypeKeys = fc
  .constantFrom('__proto__', 'constructor', 'prototype')
  .map((key) => JSON.parse(`{"${key}": {"polluted": true, "model": "x"}}`) as unknown);

/** Any JSON value, with the edges weighted in. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: edgyString },
  { weight: 1, arbitrary: hugeNumber },
  { weight: 1, arbitrary: nested },
  { weight: 1, arbitrary: prototypeKeys },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
);

// ---- bodies ------------------------------------------------------------------------------

type BodyMutation = { text: string; mutation: string };

function bodyMutations(endpoint: Endpoint): fc.Arbitrary<BodyMutation> {
  const base = endpoint.body ?? {};
  const fields = Object.keys(base);
  const json = (value: unknown, mutation: string): BodyMutation => ({ text: JSON.stringify(value) ?? 'null', mutation });
  const options: fc.Arbitrary<BodyMutation>[] = [
    // A wrong value in one field the endpoint knows.
    fc
      .tuple(fc.constantFrom(...(fields.length ? fields : ['x'])), hostileValue)
      .map(([field, value]) => json({ ...base, [field]: value }, `field ${field}`)),
    // An unknown field, a prototype key, or a field removed.
    fc.tuple(edgyString, hostileValue).map(([field, value]) => json({ ...base, [field]: value }, 'unknown field')),
    fc
      .constantFrom(...(fields.length ? fields : ['x']))
      .map((field) => json(Object.fromEntries(Object.entries(base).filter(([k]) => k !== field)), `without ${field}`)),
    // Not an object, or not JSON at all.
    hostileValue.map((value) => json(value, 'not an object')),
    fc
      .constantFrom(
        '{',
        '{"model":',
        '[1,2',
        'null',
        'undefined',
        '{"a":1}{"b":2}',
        '\u0000',
        '{"model":"sandbox/echo",}',
        "{'model':'x'}",
        'NaN',
        '1e99999',
      )
      .map((text) => ({ text, mutation: 'invalid JSON' })),
    fc.string({ unit: 'binary', maxLength: 200 }).map((text) => ({ text, mutation: 'random text' })),
    // Duplicate keys (the last one wins in JSON.parse).
    fc
      .constantFrom(...(fields.length ? fields : ['x']))
      .map((field) => ({ text: `{"${field}":1,${JSON.stringify(base).slice(1)}`, mutation: `duplicate ${field}` })),
  ];
  if (endpoint.body) options.push(fc.constant(json(base, 'valid')));
  return fc.oneof(...options);
}

// ---- multipart -----------------------------------------------------------------------------

/** A 1x1 PNG: a real image for the file parts. */
const PNG_1X1 = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4f00000000049454e44ae426082',
  'hex',
);

type MultipartBody = { body: Buffer; contentType: string; mutation: string };

function multipartBodies(endpoint: Endpoint): fc.Arbitrary<MultipartBody> {
  const base = endpoint.body ?? {};
  const fileField = endpoint.path.includes('images') ? 'image' : 'first_frame';
  const build = (
    boundary: string,
    parts: { name: string; value: string | Buffer; filename?: string }[],
    tail = `--${boundary}--\r\n`,
  ): Buffer =>
    Buffer.concat([
      ...parts.map((p) =>
        Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"\r\nContent-Type: image/png` : ''}\r\n\r\n`,
          ),
          Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value),
          Buffer.from('\r\n'),
        ]),
      ),
      Buffer.from(tail),
    ]);
  const fields = (overrides: Record<string, unknown>) =>
    Object.entries({ ...base, ...overrides }).map(([name, value]) => ({
      name,
      value: typeof value === 'string' ? value : (JSON.stringify(value) ?? ''),
    }));
  const png = { name: fileField, value: PNG_1X1, filename: 'a.png' };
  return fc.oneof(
    fc.constant({
      body: build('b0undary', [...fields({}), png]),
      contentType: 'multipart/form-data; boundary=b0undary',
      mutation: 'multipart valid',
    }),
    fc.tuple(fc.constantFrom(...Object.keys(base)), edgyString).map(([field, value]) => ({
      body: build('xx', [...fields({ [field]: value }), png]),
      contentType: 'multipart/form-data; boundary=xx',
      mutation: `multipart field ${field}`,
    })),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => ({
      body: build('xx', [...fields({}), { ...png, value: Buffer.from(bytes) }]),
      contentType: 'multipart/form-data; boundary=xx',
      mutation: 'multipart file not an image',
    })),
    fc.constantFrom('mask', 'image[]', 'reference', 'unknown', '').map((name) => ({
      body: build('xx', [...fields({}), { ...png, name }]),
      contentType: 'multipart/form-data; boundary=xx',
      mutation: `multipart file part ${name}`,
    })),
    fc.constant({
      body: build('xx', [...fields({}), png], ''),
      contentType: 'multipart/form-data; boundary=xx',
      mutation: 'multipart without its end',
    }),
    fc.constant({
      body: build('xx', [...fields({}), png]),
      contentType: 'multipart/form-data; boundary=yy',
      mutation: 'multipart with another boundary',
    }),
    fc.constant({ body: build('xx', [...fields({}), png]), contentType: 'multipart/form-data', mutation: 'multipart without a boundary' }),
    fc
      .string({ unit: 'binary', maxLength: 200 })
      .map((text) => ({ body: Buffer.from(text), contentType: 'multipart/form-data; boundary=xx', mutation: 'multipart garbage' })),
    fc.integer({ min: 20, max: 200 }).map((count) => ({
      body: build(
        'xx',
        Array.from({ length: count }, (_, i) => ({ name: `f${i}`, value: 'x' })),
      ),
      contentType: 'multipart/form-data; boundary=xx',
      mutation: 'multipart with many fields',
    })),
  );
}

// ---- headers -----------------------------------------------------------------------------

const contentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'text/plain',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/json; boundary=x; charset="utf-8"',
  '',
  '*/*',
);
const encodings = fc.constantFrom('identity', 'gzip', 'deflate', 'br', 'compress', 'gzip, br', 'GZIP', 'x-unknown');

// ---- requests ----------------------------------------------------------------------------

const idLike = fc.oneof(
  fc.constantFrom(
    'key_00000000000000000000000000',
    'key_zzzzzzzzzzzzzzzzzzzzzzzzzz',
    '%00',
    'key_%00',
    '..',
    '%2e%2e',
    '%2F',
    'null',
    'undefined',
    '__proto__',
    encodeURIComponent('\u202e'),
    'x'.repeat(2000),
  ),
  fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(s) || 'x'),
);

const pathOf = (endpoint: Endpoint) =>
  fc
    .tuple(idLike, fc.constantFrom('', '/', '?', '?a=1&a=2', '?limit=-1', '?limit=abc&after=%00', '?after=' + 'a'.repeat(300), '#frag'))
    .map(([id, suffix]) => endpoint.path.replace('{id}', id) + suffix);

const oddMethod = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'FOO');
const oddPath = fc.oneof(
  fc.constantFrom(
    '/',
    '/v1',
    '/v1/',
    '//v1//chat/completions',
    '/V1/CHAT/COMPLETIONS',
    '/v1/chat/completions/',
    '/v1/../v1/models',
    '/%00',
    '/v1/%ff%fe',
    '/graphql/',
    '/v2/models',
    '/v1/models/../../etc/passwd',
  ),
  fc.webPath({ size: 'small' }),
);

/** A malformed (or occasionally valid) request to one of the endpoints. */
export function fuzzRequest(): fc.Arbitrary<FuzzRequest> {
  return fc.integer({ min: 0, max: ENDPOINTS.length - 1 }).chain((index) => {
    const endpoint = ENDPOINTS[index]!;
    return fc
      .record({
        method: fc.oneof({ weight: 6, arbitrary: fc.constant(endpoint.method) }, { weight: 1, arbitrary: oddMethod }),
        path: fc.oneof({ weight: 8, arbitrary: pathOf(endpoint) }, { weight: 1, arbitrary: oddPath }),
        credential: fc.oneof(
          { weight: 6, arbitrary: fc.constant(endpoint.credential) },
          { weight: 1, arbitrary: fc.constantFrom<Credential>('none', 'garbage', 'key', 'session') },
        ),
        body: fc.option(bodyMutations(endpoint), { nil: null, freq: endpoint.body ? 12 : 2 }),
        multipart: endpoint.multipart ? fc.option(multipartBodies(endpoint), { nil: null, freq: 8 }) : fc.constant(null),
        contentType: fc.oneof(
          { weight: 6, arbitrary: fc.constant('application/json') },
          { weight: 2, arbitrary: contentTypes },
          { weight: 1, arbitrary: fc.constant(null) },
        ),
        encoding: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: encodings }),
        compressForReal: fc.boolean(),
        duplicateAuthorization: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
        requestId: fc.option(fc.oneof(fc.string({ maxLength: 20 }), fc.constant('x'.repeat(500))), { nil: null, freq: 4 }),
        lyingLength: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      })
      .map((r): FuzzRequest => {
        const headers: Record<string, string | string[]> = {};
        let body: Buffer | null = r.multipart ? r.multipart.body : r.body === null ? null : Buffer.from(r.body.text, 'utf8');
        if (r.multipart) headers['content-type'] = r.multipart.contentType;
        else if (r.contentType !== null && body !== null) headers['content-type'] = r.contentType;
        if (r.encoding !== null && body !== null) {
          headers['content-encoding'] = r.encoding;
          if (r.compressForReal && r.encoding.toLowerCase() === 'gzip') body = gzipSync(body);
        }
        if (r.requestId !== null) headers['x-request-id'] = r.requestId;
        // Shorter than the body: the rest reaches the server as a broken next request on the same connection.
        if (body !== null) headers['content-length'] = String(r.lyingLength && body.length > 1 ? body.length - 1 : body.length);
        const mutation = [
          r.multipart?.mutation ?? r.body?.mutation ?? 'no body',
          r.contentType !== 'application/json' ? `content-type ${r.contentType}` : '',
          r.encoding ? `encoding ${r.encoding}` : '',
          r.duplicateAuthorization ? 'two Authorization headers' : '',
          r.lyingLength ? 'lying Content-Length' : '',
        ]
          .filter(Boolean)
          .join(', ');
        return {
          endpoint: index,
          method: r.method,
          path: r.path,
          credential: r.credential,
          headers: r.duplicateAuthorization ? { ...headers, authorization: ['Bearer a', 'Bearer b'] } : headers,
          body,
          mutation,
        };
      });
  });
}
