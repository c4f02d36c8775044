import { fakeImageBase64, parseSize, startImageFake, type ImageFake } from './openai-images';
import { chatCompletions, startFakeVendor, type FakeExchange, type FakeOpenAIReply, type FakeVendor, type SseOut } from './openai';

/**
 * A fake Azure OpenAI resource over real HTTP, as Azure's data plane answers: Chat Completions
 * on a deployment's path, `POST /openai/deployments/{deployment}/chat/completions?api-version=…`,
 * the key in the `api-key` header (no Bearer), Azure's error bodies (`{"error": {"code",
 * "message"}}`) for a missing version, a wrong key or an unknown deployment, and its stream:
 * a first chunk with `prompt_filter_results` and no choices, then OpenAI's chunks, each choice
 * with its `content_filter_results`. Answers are the OpenAI fake's (same reply script).
 */

export interface FakeAzureOptions {
  apiKey?: string;
  /** Deployment names the resource has (default: any). */
  deployments?: readonly string[];
}

const FILTER_OK = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};
const PATH = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;

export async function startFakeAzureOpenAI(options: FakeAzureOptions = {}): Promise<FakeVendor<FakeOpenAIReply>> {
  const apiKey = options.apiKey ?? 'azure-fake-key';
  return startFakeVendor<FakeOpenAIReply>({ apiKey, basePath: '', defaultReply: {} }, async (exchange) => {
    const { request, json, reply } = exchange;
    const error = (status: number, code: string, message: string) => json(status, { error: { code, message } });
    if (request.headers['api-key'] !== apiKey)
      return error(
        401,
        '401',
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
      );
    const match = PATH.exec(request.path);
    if (!match || request.method !== 'POST') return error(404, '404', 'Resource not found');
    if (!request.query['api-version']) return error(404, '404', 'Resource not found');
    const deployment = decodeURIComponent(match[1]!);
    if (options.deployments && !options.deployments.includes(deployment))
      return error(
        404,
        'DeploymentNotFound',
        'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
      );
    if (reply.status && reply.status >= 400)
      return error(
        reply.status,
        reply.status === 429 ? '429' : 'InternalServerError',
        reply.errorMessage ?? 'The fake Azure resource failed.',
      );
    return chatCompletions(withAzureStream(exchange), undefined);
  });
}

/** Azure's stream: the prompt filter's chunk first, and every choice with its filter results. */
function withAzureStream(exchange: FakeExchange<FakeOpenAIReply>): FakeExchange<FakeOpenAIReply> {
  const first: SseOut = {
    data: JSON.stringify({
      choices: [],
      created: 0,
      id: '',
      model: '',
      object: '',
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTER_OK }],
    }),
  };
  const withFilters = (event: SseOut): SseOut => {
    if (event.data === '[DONE]') return event;
    const chunk = JSON.parse(event.data) as { choices?: Array<Record<string, unknown>> };
    if (Array.isArray(chunk.choices))
      chunk.choices = chunk.choices.map((choice) => ({ ...choice, content_filter_results: choice.finish_reason ? {} : FILTER_OK }));
    return { ...event, data: JSON.stringify(chunk) };
  };
  return { ...exchange, sse: (events, options) => exchange.sse([first, ...events.map(withFilters)], options) };
}

const IMAGES_PATH = /^\/openai\/deployments\/([^/]+)\/images\/(generations|edits)$/;

/**
 * The same resource's Images API, as Azure answers it:
 * `POST /openai/deployments/{deployment}/images/generations?api-version=…` (JSON) and
 * `/images/edits` (multipart: `image` or `image[]` files, `prompt`, …) with the `api-key`
 * header, OpenAI's body without `model` (the path names the deployment), OpenAI's answer, and
 * Azure's error bodies. Replies are scripted per call like the OpenAI images fake's.
 */
export async function startFakeAzureOpenAIImages(options: FakeAzureOptions = {}): Promise<ImageFake> {
  const apiKey = options.apiKey ?? 'azure-fake-key';
  return startImageFake({ apiKey, basePath: '' }, async ({ request, reply, json }) => {
    const error = (status: number, code: string, message: string) => json(status, { error: { code, message } });
    if (request.headers['api-key'] !== apiKey)
      return error(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.');
    const match = IMAGES_PATH.exec(request.path);
    if (!match || request.method !== 'POST' || !request.query['api-version']) return error(404, '404', 'Resource not found');
    if (options.deployments && !options.deployments.includes(decodeURIComponent(match[1]!)))
      return error(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist.');
    if (reply.status)
      return json(
        reply.status,
        {
          error: {
            code: reply.status === 429 ? '429' : 'InternalServerError',
            message: reply.errorMessage ?? 'The fake Azure resource failed.',
          },
        },
        reply.retryAfter ? { 'retry-after': reply.retryAfter } : {},
      );
    const isEdit = match[2] === 'edits';
    if (isEdit && !/^multipart\/form-data/i.test(request.headers['content-type'] ?? ''))
      return error(400, 'invalid_request_error', 'Image edits take multipart/form-data.');
    const body = (isEdit ? request.fields : (request.json ?? {})) as Record<string, unknown>;
    if (typeof body.prompt !== 'string' || !body.prompt)
      return error(400, 'invalid_request_error', "Missing required parameter: 'prompt'.");
    if (isEdit && !request.files.some((f) => f.field === 'image' || f.field === 'image[]'))
      return error(400, 'invalid_request_error', "Missing required parameter: 'image'.");
    if (Number(body.n ?? 1) !== 1) return error(400, 'invalid_request_error', 'The fake makes one image per call.');
    json(200, { created: Math.floor(Date.now() / 1000), data: [{ b64_json: await fakeImageBase64(reply, parseSize(body.size)) }] });
  });
}
