import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { GraphqlServices } from './context';
import type * as GraphqlServer from './server';
import type { GraphqlOptions, MountedGraphql } from './server';

/**
 * The GraphQL API, loaded on its first request (HTTP or WebSocket), not at startup: Apollo,
 * graphql-js, type-graphql, ws and the schema hold about 12 MB resident, which an instance that
 * serves only the REST plane never needs (docs/performance.md, "Load only what serving uses").
 * The first GraphQL request waits for the schema to be built (a fraction of a second); requests
 * that come meanwhile wait for the same build. Only types are imported here: the stack itself
 * is required by the first request.
 */
export function lazyGraphql(httpServer: Server, services: GraphqlServices, log: Logger, options: GraphqlOptions) {
  let mounting: Promise<MountedGraphql> | null = null;
  const mounted = (): Promise<MountedGraphql> => {
    // Required here, not imported at the top: loading the module is what this defers (a failure
    // to load is the promise's, not a throw in an event listener).
    mounting ??= Promise.resolve().then(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const graphql = require('./server') as typeof GraphqlServer;
      return graphql.mountGraphql(services, log, options);
    });
    return mounting;
  };
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Only /graphql upgrades (graphql-ws; the path matched as ws matches it, query ignored): a
    // WebSocket to any other path is refused here, without loading the API for it.
    if (pathOf(req.url) !== GRAPHQL_PATH) return refuseUpgrade(socket);
    mounted().then(
      (graphql) => graphql.handleUpgrade(req, socket, head),
      (error: unknown) => {
        log.error({ err: error }, 'the GraphQL API could not be started');
        socket.destroy();
      },
    );
  };
  httpServer.on('upgrade', onUpgrade);
  // The promise goes back to Express 5, which passes a rejection of Apollo's handler to `next`, as
  // when Apollo's handler was mounted itself.
  const middleware: RequestHandler = (req, res, next) => mounted().then((graphql) => graphql.middleware(req, res, next), next);
  return {
    middleware,
    /** Whether the first GraphQL request has loaded it (for tests and diagnostics). */
    get loaded(): boolean {
      return mounting !== null;
    },
    async close(): Promise<void> {
      httpServer.off('upgrade', onUpgrade);
      if (mounting) await (await mounting.catch(() => null))?.close();
    },
  };
}

const GRAPHQL_PATH = '/graphql';

function pathOf(url = ''): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** 404 to an upgrade Tollgate does not serve: the handshake fails, the connection closes. */
function refuseUpgrade(socket: Duplex): void {
  // The REST error envelope, as an HTTP request to an unknown path gets it.
  const body = JSON.stringify({
    error: { code: 'not_found', message: `WebSocket connections are served at ${GRAPHQL_PATH} only.`, details: {} },
  });
  socket.end(
    `HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
