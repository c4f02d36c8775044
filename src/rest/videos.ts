import { Router, type Request, type Response } from 'express';
import rangeParser from 'range-parser';
import type { AuthService } from '../domain/accounts/auth';
import { badRequest, rangeNotSatisfiable } from '../domain/shared/errors';
import { pageCursor, pageSize } from '../domain/shared/pages';
import type { VideoStorage } from '../domain/videos/ports';
import type { VideoRequestInput } from '../domain/videos/rules';
import { decodeVideoCreateBody, decodeVideoCreateForm, parseIdempotencyKey } from '../protocols/openai-videos/decode-request';
import type { VideoService } from '../domain/videos/service';
import type { VideoListQuery } from '../domain/videos/store';
import { toVideoDeletedObject, toVideoListObject, toVideoObject } from '../protocols/openai-videos/encode-answer';
import { keyPrincipal, prepaidKeyOnly, requireApiKey } from './auth';
import { admitApiKeyRequests } from './admission';
import type { AdmissionService } from '../domain/limits/admission';
import { accessLogRecord, bodyObject, readJsonBody, setHeaders } from './http';
import { readMultipart, type MultipartLimits } from './multipart';
import { isMultipart } from './http';

export interface VideosRouterDeps {
  auth: AuthService;
  admission: AdmissionService;
  videos: VideoService;
  storage: VideoStorage;
  uploads: MultipartLimits;
  maxJsonBodyBytes: number;
}

/** /v1/videos: create (JSON or multipart), read, list, download and delete; prepaid keys only. */
export function videosRouter(deps: VideosRouterDeps): Router {
  const router = Router();
  const authenticate = requireApiKey(deps.auth, { allowXApiKey: false });
  const create = async (req: Request, res: Response) => {
    const idempotencyKey = parseIdempotencyKey(req.headers['idempotency-key']);
    const created = await deps.videos.create(keyPrincipal(res), { request: await readCreateRequest(req, deps), idempotencyKey });
    accessLogRecord(res).model = created.video.model;
    if (created.routedFrom !== null) res.setHeader('x-service-model-routed-from', created.routedFrom);
    if (created.replayed) res.setHeader('x-service-idempotent-replay', 'true');
    res.status(created.replayed ? 200 : 202).json(toVideoObject(created.video));
  };

  // A create whose Idempotency-Key made a job already is answered (the job, or 409 for another
  // body) before admission: that job's slot was counted when it began, and a full account must
  // still learn what became of its request. Anything else is admitted first.
  router.post(
    '/videos',
    authenticate,
    prepaidKeyOnly,
    async (req, res, next) => {
      const idempotencyKey = parseIdempotencyKey(req.headers['idempotency-key']);
      if (idempotencyKey === null || !(await deps.videos.idempotencyKeyInUse(keyPrincipal(res).accountId, idempotencyKey))) return next();
      setHeaders(res, await deps.admission.currentHeaders(keyPrincipal(res)));
      await create(req, res);
    },
    admitApiKeyRequests(deps.admission),
    create,
  );

  router.use('/videos', authenticate, admitApiKeyRequests(deps.admission), prepaidKeyOnly);

  router.get('/videos', async (req, res) => {
    res.json(toVideoListObject(await deps.videos.list(keyPrincipal(res).accountId, listQuery(req))));
  });

  router.get('/videos/:id', async (req, res) => {
    res.json(toVideoObject(await deps.videos.get(keyPrincipal(res).accountId, String(req.params.id))));
  });

  // Completed and failed jobs only (409 while queued or running); billing records stay (docs/videos.md).
  router.delete('/videos/:id', async (req, res) => {
    res.json(toVideoDeletedObject(await deps.videos.delete(keyPrincipal(res).accountId, String(req.params.id))));
  });

  router.get('/videos/:id/content', async (req, res) => {
    const variant = req.query.variant;
    if (variant !== undefined && variant !== 'video') throw badRequest("variant: only 'video' is available", { field: 'variant' });
    const content = await deps.videos.content(keyPrincipal(res).accountId, String(req.params.id));
    sendRange(req, res, deps.storage, content.key, content.size);
  });

  return router;
}

/** `Range` handled by range-parser: one satisfiable range → 206, none satisfiable → 416, no or malformed header → 200. */
function sendRange(req: Request, res: Response, storage: VideoStorage, key: string, size: number): void {
  res.setHeader('accept-ranges', 'bytes');
  res.setHeader('content-type', 'video/mp4');
  const header = req.headers.range;
  const ranges = header ? rangeParser(size, header, { combine: true }) : -2;
  if (ranges === -1) {
    res.setHeader('content-range', `bytes */${size}`);
    throw rangeNotSatisfiable(String(header), size);
  }
  // Several ranges would need a multipart/byteranges answer; the whole file is a valid answer too.
  const range = ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1 ? ranges[0]! : null;
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  if (range) {
    res.status(206);
    res.setHeader('content-range', `bytes ${start}-${end}/${size}`);
  }
  res.setHeader('content-length', size === 0 ? 0 : end - start + 1);
  if (size === 0) return void res.end();
  const stream = storage.openRange(key, start, end);
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

/** The JSON body, read here after authentication (unless an app-wide parser already read it), or the multipart form. */
async function readCreateRequest(req: Request, deps: VideosRouterDeps): Promise<VideoRequestInput> {
  if (isMultipart(req)) return decodeVideoCreateForm(await readMultipart(req, deps.uploads));
  return decodeVideoCreateBody(bodyObject(req.readableEnded ? req.body : await readJsonBody(req, deps.maxJsonBodyBytes)));
}

function listQuery(req: Request): VideoListQuery {
  const { limit, order, after } = req.query;
  if (order !== undefined && order !== 'asc' && order !== 'desc') throw badRequest("order must be 'asc' or 'desc'", { field: 'order' });
  return { limit: pageSize(limit), order: order ?? 'desc', after: pageCursor(after) };
}
