import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { KNOWN_FIELDS as MESSAGES_FIELDS } from '../../src/protocols/anthropic-messages/decode-request';
import { KNOWN_FIELDS as CHAT_FIELDS } from '../../src/protocols/openai-chat/decode-request';
import { KNOWN_FIELDS as RESPONSES_FIELDS } from '../../src/protocols/openai-responses/decode-request';
import { KEY_CREATE_FIELDS, KEY_UPDATE_FIELDS } from '../../src/rest/keys';
import { TEXT_ENDPOINT_PATHS } from '../../src/rest/text-endpoints';
import { call, startTestTollgate, type TestTollgate } from '../support/tollgate';

/**
 * GET /v1/openapi.json: a valid OpenAPI 3.1 document (checked by a maintained validator), that
 * documents every route the app really serves (enumerated from the Express router and the text
 * endpoints, so a new route without an entry fails here) and nothing it does not serve, with
 * request bodies listing exactly the fields the decoders accept.
 */

let t: TestTollgate;
let doc: { openapi: string; paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };

beforeAll(async () => {
  t = await startTestTollgate();
  const response = await call(`${t.url}/v1/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  doc = response.body;
});

afterAll(async () => {
  await t.stop();
});

/** @seriousme/openapi-schema-validator is an ES module: it runs in its own Node process. */
function validateWithSeriousme(document: unknown): { valid: boolean; errors?: unknown } {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const result = await new Validator().validate(JSON.parse(input));
    process.stdout.write(JSON.stringify({ valid: result.valid, version: result.version, errors: result.errors }));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    input: JSON.stringify(document),
    cwd: join(__dirname, '..', '..'),
  });
  return JSON.parse(out.toString());
}

interface ServedRoute {
  method: string;
  path: string;
}

/** Every route of the Express app (router layers, recursively), as OpenAPI paths; a mounted handler without routes counts with method `*`. */
function expressRoutes(stack: any[], prefix = ''): ServedRoute[] {
  const routes: ServedRoute[] = [];
  for (const layer of stack) {
    const paths: string[] = Array.isArray(layer.rawPath) ? layer.rawPath : [layer.rawPath ?? ''];
    for (const raw of paths) {
      const path = raw === '/' ? '' : String(raw);
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods).filter((m) => m !== '_all')) routes.push({ method, path: prefix + path });
      } else if (Array.isArray(layer.handle?.stack)) {
        routes.push(...expressRoutes(layer.handle.stack, prefix + path));
      } else if (path !== '') {
        routes.push({ method: '*', path: prefix + path });
      }
    }
  }
  return routes.map((r) => ({ method: r.method, path: r.path.replace(/:(\w+)/g, '{$1}') }));
}

test('the document is valid OpenAPI 3.1', () => {
  expect(doc.openapi).toBe('3.1.0');
  const result = validateWithSeriousme(doc);
  expect(result.errors ?? null).toBeNull();
  expect(result.valid).toBe(true);
});

test('a broken document fails the same validator (the check can fail)', () => {
  const broken = { ...doc, paths: { '/v1/models': { get: { responses: { 200: { content: 'not an object' } } } } } };
  expect(validateWithSeriousme(broken).valid).toBe(false);
});

test('every route the app serves is documented, and nothing else is', () => {
  const served = [
    ...expressRoutes((t.tollgate.restApp as any).router.stack),
    ...TEXT_ENDPOINT_PATHS.map((path) => ({ method: 'post', path })),
  ];
  expect(served.length).toBeGreaterThan(15);
  const undocumented = served.filter((r) => !doc.paths[r.path] || (r.method !== '*' && !doc.paths[r.path]![r.method]));
  expect(undocumented).toEqual([]);

  const servedKeys = new Set(served.map((r) => `${r.method} ${r.path}`));
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method, path })));
  const stale = documented.filter((r) => !servedKeys.has(`${r.method} ${r.path}`) && !servedKeys.has(`* ${r.path}`));
  expect(stale).toEqual([]);
});

test('request bodies list exactly the fields the decoders and routes accept', () => {
  const fieldsOf = (name: string) => Object.keys(doc.components.schemas[name].properties).sort();
  expect(fieldsOf('ChatCompletionRequest')).toEqual([...CHAT_FIELDS].sort());
  expect(fieldsOf('ResponsesRequest')).toEqual([...RESPONSES_FIELDS].sort());
  expect(fieldsOf('MessagesRequest')).toEqual([...MESSAGES_FIELDS].sort());
  expect(fieldsOf('CreateKeyRequest')).toEqual([...KEY_CREATE_FIELDS].sort());
  expect(fieldsOf('UpdateKeyRequest')).toEqual([...KEY_UPDATE_FIELDS].sort());
  expect(doc.paths['/v1/chat/completions']!.post.requestBody.content['application/json'].schema).toEqual({
    $ref: '#/components/schemas/ChatCompletionRequest',
  });
  expect(doc.paths['/v1/keys/{id}']!.patch.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
});

test('answers document their headers: request id everywhere, rate limits for API keys, Retry-After on 429', () => {
  const chat = doc.paths['/v1/chat/completions']!.post.responses;
  expect(Object.keys(chat['200'].headers)).toEqual(
    expect.arrayContaining(['x-request-id', 'x-ratelimit-remaining-tokens', 'x-service-model-routed-from', 'x-service-max-output-clamped']),
  );
  expect(Object.keys(chat['429'].headers)).toContain('Retry-After');
  expect(Object.keys(doc.paths['/v1/keys']!.get.responses['200'].headers)).toEqual(['x-request-id']);
  for (const header of Object.values(chat['200'].headers) as { $ref: string }[]) {
    expect((doc.components as Record<string, any>).headers[header.$ref.split('/').pop()!]).toBeDefined();
  }
});
