import express, { type Express, type RequestHandler, type Router } from 'express';
import { dashboard } from './dashboard';
import { errorHandler, jsonBody, requestContext, unknownPath, type RequestObservers } from './http';

export interface RestAppParts {
  observers: RequestObservers;
  maxJsonBodyBytes: number;
  /** Routers mounted under /v1, in order. */
  v1: Router[];
  /** Routers mounted at the root (operations: /metrics). */
  root: Router[];
  graphql: RequestHandler;
  ready: () => Promise<boolean>;
  /** Counts requests in flight, for draining on shutdown. */
  tracker: RequestHandler;
}

/** The Express app: health, /v1 (REST plane), /graphql, then the envelope for everything else. */
export function createRestApp(parts: RestAppParts): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(parts.tracker);
  app.use(requestContext(parts.observers));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    const ready = await parts.ready();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable' });
  });
  // GraphQL reads its body before any credential: signIn needs none. Every /v1 router reads
  // its body itself, after authentication (jsonBody), so an unauthenticated client costs no parsing.
  app.use('/graphql', jsonBody(parts.maxJsonBodyBytes), parts.graphql);
  for (const router of parts.root) app.use(router);
  for (const router of parts.v1) app.use('/v1', router);
  app.use('/dashboard', dashboard());
  app.use(unknownPath);
  app.use(errorHandler(parts.observers.log));
  return app;
}
