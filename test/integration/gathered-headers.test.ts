import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { beginRequest, sendJson, setAnswerHeader, setHeaders, type RequestObservers } from '../../src/rest/http';
import { ulidIds } from '../../src/domain/shared/ids';
import { noMetrics } from '../../src/domain/shared/telemetry';

/**
 * The text endpoints gather their answer's headers and send them in one writeHead
 * (beginRequest's gatherHeaders): a header set twice, in any case, is sent once with the last
 * value, as res.setHeader would; a client's value that no header may carry is refused where it
 * is set; a header set with res.setHeader all the same is merged.
 */
const observers: RequestObservers = {
  ids: ulidIds(),
  log: pino({ level: 'silent' }),
  metrics: noMetrics,
  tracer: null,
  endpointOf: () => '/test',
};

let server: Server;
let url: string;
let refusedAtSet = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    beginRequest(req, res, observers, '/test', '/test', true);
    setHeaders(res, { 'Retry-After': '1', 'x-ratelimit-limit-requests': '10' });
    setHeaders(res, { 'retry-after': '2' });
    setAnswerHeader(res, 'X-Service-Model-Routed-From', 'gpt');
    try {
      setAnswerHeader(res, 'x-bad', 'line\nbreak');
    } catch {
      refusedAtSet = true;
    }
    // CORS sets its headers with res.setHeader: writeHead then merges the gathered ones.
    if (req.url === '/merged') res.setHeader('vary', 'Origin');
    sendJson(res, 200, { ok: true });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

test.each(['plain', 'merged'])(
  '%s: a gathered header set twice in two cases is sent once, with its last value; a bad value is refused when set',
  async (path) => {
    refusedAtSet = false;
    const res = await fetch(url + path);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('10');
    expect(res.headers.get('x-service-model-routed-from')).toBe('gpt');
    expect(res.headers.get('vary')).toBe(path === 'merged' ? 'Origin' : null);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.headers.get('x-bad')).toBeNull();
    expect(refusedAtSet).toBe(true);
  },
);
