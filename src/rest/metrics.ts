import { Router } from 'express';
import type { AuthService } from '../domain/accounts/auth';
import { invalidToken, notFound } from '../domain/shared/errors';
import { bearerToken } from './auth';

/** The Prometheus text of the instance's metrics (infra/metrics.ts). */
export interface MetricsExposition {
  exposition(): Promise<{ contentType: string; text: string }>;
}

/**
 * GET /metrics for the operator token only, on the main port: one port to expose and one
 * secret, which Prometheus sends as `authorization: {credentials: …}`. Without an operator
 * token configured there are no metrics (404, saying why).
 */
export function metricsRouter(auth: AuthService, metrics: MetricsExposition | null): Router {
  const router = Router();
  router.get('/metrics', async (req, res) => {
    if (metrics === null) throw notFound('Metrics are off: set TOLLGATE_ADMIN_TOKEN to serve them to the operator.');
    const token = bearerToken(req);
    if (!token) throw invalidToken('Send the operator token as Authorization: Bearer <TOLLGATE_ADMIN_TOKEN>.');
    if (!auth.isOperatorToken(token)) throw invalidToken('GET /metrics needs the operator token.');
    const { contentType, text } = await metrics.exposition();
    res.setHeader('content-type', contentType);
    res.setHeader('cache-control', 'no-store');
    res.send(text);
  });
  return router;
}
