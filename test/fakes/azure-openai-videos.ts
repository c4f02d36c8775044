import { startFakeOpenAIVideos, type FakeOpenAIVideos, type FakeRefusal } from './openai-videos';

/**
 * A fake Azure OpenAI resource's videos (Sora 2 on Azure's v1 API) over real HTTP. Azure's v1
 * API mirrors OpenAI's videos API, so this is the OpenAI videos fake (same jobs, polls, file and
 * failure script) at Azure's place and in its manners: `POST /openai/v1/videos` (multipart or
 * JSON, `model` = the deployment's name), `GET /openai/v1/videos/{id}` and `…/{id}/content`, the
 * key in the `api-key` header (no Bearer), Azure's error bodies (`{"error": {"code", "message"}}`)
 * for a wrong key and for a `model` that names no deployment of the resource. `url` is the
 * resource's base (no path), as the catalog's `base_url` takes it.
 */
export async function startFakeAzureOpenAIVideos(options: {
  apiKey?: string;
  /** Deployment names the resource has (default: any). */
  deployments?: readonly string[];
  content: Buffer;
  pollsToFinish?: number;
}): Promise<FakeOpenAIVideos> {
  const apiKey = options.apiKey ?? 'azure-fake-key';
  return startFakeOpenAIVideos({
    apiKey,
    content: options.content,
    pollsToFinish: options.pollsToFinish,
    dialect: {
      apiPath: '/openai/v1',
      urlPath: '',
      authorize: (req) =>
        req.headers['api-key'] === apiKey
          ? null
          : {
              status: 401,
              code: '401',
              message:
                'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
            },
      checkModel: (model) =>
        model !== undefined && (options.deployments?.includes(model) ?? true)
          ? null
          : {
              status: 404,
              code: 'DeploymentNotFound',
              message:
                'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
            },
      errorBody: ({ status, code, message }: FakeRefusal) => ({ error: { code: code ?? String(status), message } }),
    },
  });
}
