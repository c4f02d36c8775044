import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { AuthService } from '../domain/accounts/auth';
import { Cancellation } from '../domain/generation/cancellation';
import type { ImageRequestInput } from '../domain/images/request';
import type { ImageService } from '../domain/images/service';
import { unixSeconds, type Clock } from '../domain/shared/clock';
import { decodeEditForm, decodeGenerationBody } from '../protocols/openai-images/decode-request';
import { encodeImagesResponse } from '../protocols/openai-images/encode-answer';
import { admitApiKeyRequests } from './admission';
import type { AdmissionService } from '../domain/limits/admission';
import { keyPrincipal, prepaidKeyOnly, requireApiKey } from './auth';
import { accessLogRecord } from './http';
import { discardRemainingBody, readMultipart, type MultipartForm, type MultipartLimits } from './multipart';
import { isMultipart } from './http';
import { ApiError, unsupportedMediaType } from '../domain/shared/errors';

export interface ImagesRouterDeps {
  auth: AuthService;
  admission: AdmissionService;
  images: ImageService;
  clock: Clock;
  uploadLimits: MultipartLimits;
  /** Reads a JSON body into req.body (rest/http.ts jsonBody), after the gate. */
  jsonBody: RequestHandler;
}

/**
 * POST /images/generations (JSON) and /images/edits (multipart): authenticate, admit, refuse
 * plan keys, then (edits) read the upload, decode, and hand it to the image service, which
 * validates it against the model and runs it.
 * The body of an edit is read only after the key is known to be good.
 */
export function imagesRouter(deps: ImagesRouterDeps): Router {
  const router = Router();
  const gate = [requireApiKey(deps.auth, { allowXApiKey: false }), admitApiKeyRequests(deps.admission), prepaidKeyOnly];

  router.post(
    '/images/generations',
    ...gate,
    (req, _res, next) => {
      if (isMultipart(req))
        throw unsupportedMediaType('Image generations take a JSON body (Content-Type: application/json); uploads go to /v1/images/edits.');
      next();
    },
    deps.jsonBody,
    async (req: Request, res: Response) => {
      await answer(deps, res, decodeGenerationBody(req.body));
    },
  );
  router.post('/images/edits', ...gate, async (req: Request, res) => {
    const form = await readMultipart(req, deps.uploadLimits, {
      explainTooManyFiles: (sent, count) => tooManyImages(deps, res, sent, count),
    });
    await answer(deps, res, decodeEditForm(form));
  });
  // An edit refused before its upload was read (bad key, limit, bad part) answers once the rest is discarded.
  router.use('/images/edits', async (error: unknown, req: Request, _res: Response, next: NextFunction) => {
    await discardRemainingBody(req, deps.uploadLimits.maxTotalBytes);
    next(error);
  });
  return router;
}

/**
 * More image parts than the upload limit: when the model's own limit is the lower one (or the
 * request is wrong another way), that is the answer; otherwise null (413 naming the upload limit).
 */
function tooManyImages(deps: ImagesRouterDeps, res: Response, form: MultipartForm, count: number): Error | null {
  try {
    deps.images.validate(keyPrincipal(res), { ...decodeEditForm(form), imageCount: count });
    return null;
  } catch (error) {
    if (!(error instanceof ApiError)) return null;
    const modelLimit = error.details.limit === 'max_input_images' ? Number(error.details.limit_value) : null;
    return modelLimit !== null && modelLimit > deps.uploadLimits.maxFiles ? null : error;
  }
}

async function answer(deps: ImagesRouterDeps, res: Response, input: ImageRequestInput): Promise<void> {
  const principal = keyPrincipal(res);
  const request = deps.images.validate(principal, input);
  const record = accessLogRecord(res);
  record.model = request.model.id;
  if (request.routedFrom !== null) res.setHeader('x-service-model-routed-from', request.routedFrom);
  // A client that leaves before its answer stops the vendor calls still running.
  const signal = new Cancellation();
  res.once('close', () => {
    if (!res.writableFinished) signal.cancel();
  });
  const result = await deps.images.run(principal, request, { signal, requestId: record.requestId });
  // The model that served: the one asked, or its fallback (docs/routing.md, Images).
  const served = result.request;
  record.model = served.model.id;
  record.costMicro = result.chargedMicro;
  if (result.deployment !== null) record.deployment = result.deployment;
  if (result.attempts !== null) record.attempts = result.attempts;
  if (served.routedFrom !== null) res.setHeader('x-service-model-routed-from', served.routedFrom);
  res.json(encodeImagesResponse(result, { created: unixSeconds(deps.clock.now()), size: served.sizeLabel, quality: served.quality }));
}
