import { Router } from 'express';
import { buildOpenApiDocument } from './document';

/** GET /v1/openapi.json: the document, built once (it depends on nothing that changes). */
export function openApiRouter(): Router {
  const router = Router();
  const text = JSON.stringify(buildOpenApiDocument());
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(text);
  });
  return router;
}
