// The Node floor for a JSON-in, JSON-out gateway: a minimal proxy that does only the work every
// gateway must do per request on this runtime (node:http server, read and JSON.parse the client's
// body, JSON.stringify a vendor request, undici to the mock, JSON.parse the answer, rewrite the
// model, JSON.stringify it back; for streams, split SSE lines, JSON.parse and re-stringify each
// data payload). No auth, billing, limits, logs or metrics. Usage: node node-floor.mjs PORT UNDICI_DIR
// The team's file (../shared/bench/node-floor.mjs), with small changes for `npm run bench`
// (bench/cpu.ts) that leave the per-request work as it was: FLOOR_UPSTREAM (one origin for both
// bodies) and FLOOR_API_KEY replace the fixed upstreams on ports 18080/18081 and the key 'x'
// when set, and the port it listens on (PORT 0: any free one) goes to the parent over IPC.
import http from 'node:http';
const [port, undiciDir] = process.argv.slice(2);
const { Pool } = await import(`${undiciDir}/index.js`);
const upstream = process.env.FLOOR_UPSTREAM;
const apiKey = process.env.FLOOR_API_KEY ?? 'x';
const pools = {
  json: new Pool(upstream ?? 'http://127.0.0.1:18080', { connections: 128, pipelining: 1 }),
  stream: new Pool(upstream ?? 'http://127.0.0.1:18081', { connections: 128, pipelining: 1 }),
};
const server = http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const stream = body.stream === true;
        const up = await (stream ? pools.stream : pools.json).request({
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
          body: JSON.stringify({ ...body, model: 'm' }),
        });
        if (!stream) {
          const answer = JSON.parse(await up.body.text());
          answer.model = body.model;
          const out = JSON.stringify(answer);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
          res.end(out);
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let rest = '';
        for await (const c of up.body) {
          const lines = (rest + c.toString('utf8')).split('\n');
          rest = lines.pop();
          let out = '';
          for (const line of lines) {
            if (!line.startsWith('data: ')) continue;
            const data = line.slice(6);
            if (data === '[DONE]') {
              out += 'data: [DONE]\n\n';
              continue;
            }
            const ev = JSON.parse(data);
            ev.model = body.model;
            out += `data: ${JSON.stringify(ev)}\n\n`;
          }
          if (out) res.write(out);
        }
        res.end();
      } catch (e) {
        res.writeHead(502);
        res.end(String(e));
      }
    });
  })
  .listen(+port, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
