/**
 * Child process of `npm run bench`: the least a Node.js gateway can do, for comparison. A bare
 * node:http server that forwards each request's body to the upstream on an undici keep-alive
 * pool and pipes the answer back: no parsing, no keys, no limits, no billing. What it adds over
 * a direct call is what this machine charges any Node gateway (two more hops, two more
 * wake-ups, HTTP on both sides); what Tollgate adds beyond it is Tollgate's own.
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = new URL(process.env.FLOOR_UPSTREAM!);
const pool = new Pool(upstream.origin, { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 });
const prefix = upstream.pathname.replace(/\/$/, '');

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    pool
      .request({
        path: prefix + req.url!.replace(/^\/v1/, ''),
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: req.headers.authorization! },
        body: Buffer.concat(chunks),
      })
      .then(async (answer) => {
        res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') });
        for await (const chunk of answer.body) res.write(chunk);
        res.end();
      })
      .catch(() => {
        res.statusCode = 502;
        res.end();
      });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
process.on('disconnect', () => process.exit(0));
