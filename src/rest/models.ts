import { Router, type RequestHandler, type Response } from 'express';
import { renderImageModelList, renderModel, renderTextModelList, renderVideoModelList } from '../domain/catalog/render';
import type { Catalog } from '../domain/catalog/types';
import { modelAccessFor } from '../domain/catalog/vendors';
import type { AuthService } from '../domain/accounts/auth';
import { keyPrincipal, prepaidKeyOnly, requireApiKey } from './auth';

/** GET /models, /models/{id}, /images/models, /videos/models: only what the key can use, prices for prepaid keys. */
export function modelsRouter(
  auth: AuthService,
  catalog: Catalog,
  configuredVendors: ReadonlySet<string>,
  admitRequest: RequestHandler,
): Router {
  const router = Router();
  const access = (res: Response) => modelAccessFor(keyPrincipal(res), configuredVendors);
  router.get(
    ['/models', '/images/models', '/videos/models', '/models/:id', '/models/:namespace/:name'],
    requireApiKey(auth, { allowXApiKey: false }),
    admitRequest,
  );
  router.get('/models', (_req, res) => void res.json(renderTextModelList(catalog, access(res))));
  // One model by any id that resolves for the key; `vendor/model` ids come URL-encoded from the SDKs, or as two segments.
  router.get(['/models/:id', '/models/:namespace/:name'], (req, res) => {
    const { id, namespace, name } = req.params as Record<string, string | undefined>;
    const { entry, routedFrom } = renderModel(catalog, id ?? `${namespace}/${name}`, access(res));
    if (routedFrom !== null) res.setHeader('x-service-model-routed-from', routedFrom);
    res.json(entry);
  });
  router.get('/images/models', prepaidKeyOnly, (_req, res) => void res.json(renderImageModelList(catalog, access(res))));
  router.get('/videos/models', prepaidKeyOnly, (_req, res) => void res.json(renderVideoModelList(catalog, access(res))));
  return router;
}
