import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** A TCP proxy to a server (Redis, PostgreSQL) that a test can cut (drop/restore) or stall (hang/unhang). */
export async function startTcpProxy(host: string, targetPort: number) {
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  /** Server side of each client connection. */
  const upstreams = new Map<Socket, Socket>();
  let hanging = false;
  let holdingReplies = false;
  /** What clients sent, one entry per read (a client's write arrives as one read unless it is large). */
  const received: Buffer[] = [];
  let recording = false;
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        clients.add(client);
        upstreams.set(client, upstream);
        client.on('close', () => {
          clients.delete(client);
          upstreams.delete(client);
          upstream.destroy();
        });
        upstream.on('close', () => client.destroy());
        client.on('data', (chunk: Buffer) => {
          if (recording) received.push(chunk);
        });
        if (hanging) client.pause();
        client.pipe(upstream);
        if (!holdingReplies) upstream.pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server?.address() as AddressInfo).port;
        resolve();
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (server) server.close(() => resolve());
      else resolve();
      server = null;
    });
  await listen();
  return {
    port,
    drop: close,
    restore: listen,
    stop: close,
    /** Starts keeping what clients send (readable with `reads()`), forgetting what was kept. */
    record: () => {
      recording = true;
      received.length = 0;
    },
    /** What clients sent since `record()`, one entry per read. */
    reads: (): readonly Buffer[] => received,
    /** Stops reading what clients send (it waits, in order, until unhang). */
    hang: () => {
      hanging = true;
      for (const c of clients) c.pause();
    },
    unhang: () => {
      hanging = false;
      for (const c of clients) c.resume();
    },
    /** Passes what clients send, but keeps the server's replies (in order) until releaseReplies: a command runs, its caller times out. */
    holdReplies: () => {
      holdingReplies = true;
      for (const [client, upstream] of upstreams) {
        upstream.unpipe(client);
        upstream.pause();
      }
    },
    releaseReplies: () => {
      holdingReplies = false;
      for (const [client, upstream] of upstreams) upstream.pipe(client);
    },
  };
}
