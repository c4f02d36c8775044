import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The HTTP server, the count of requests in flight, and its bounded drain on close. */
export interface GatewayHttpServer {
  httpServer: Server;
  /** Counts a request as in flight until its response closes. */
  track(res: ServerResponse): void;
  listen(port: number, host?: string): Promise<number>;
  /**
   * Stops accepting, lets requests in flight finish for up to drainMs, then closes every
   * connection. Resolves with the drain's deadline (epoch ms), which the rest of the close shares.
   */
  drain(drainMs: number): Promise<number>;
}

export function createGatewayHttpServer(): GatewayHttpServer {
  let inFlight = 0;
  // Idle keep-alive connections live longer than a load balancer's idle timeout (60 s is common),
  // so the balancer, not Tollgate, closes them: otherwise a request sent on a connection that
  // Tollgate closes at that moment fails with "other side closed".
  const httpServer = createServer({ keepAliveTimeout: 65_000 });
  // 'close' comes once per response: `on` with one shared function, no wrapper or closure per request.
  const finished = () => void inFlight--;
  return {
    httpServer,
    track: (res) => {
      inFlight++;
      res.on('close', finished);
    },
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(port, host, () => resolve((httpServer.address() as AddressInfo).port));
      }),
    drain: async (drainMs) => {
      const closed = new Promise<void>((resolve) => (httpServer.listening ? httpServer.close(() => resolve()) : resolve()));
      httpServer.closeIdleConnections();
      const deadline = Date.now() + drainMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      httpServer.closeAllConnections();
      await closed;
      return deadline;
    },
  };
}
