import { pieces, sendCompletionPaced, startFakeVendor, type FakeReplyControls, type FakeVendor } from './openai';

/**
 * A fake Gemini API over real HTTP: `POST /v1beta/models/{model}:generateContent` (JSON) and
 * `:streamGenerateContent?alt=sse` (SSE with CRLF line ends, like Google's servers; without
 * `alt=sse`, a JSON array). The key is accepted as `x-goog-api-key` or `?key=`.
 */

export interface FakeGeminiReply extends FakeReplyControls {
  /** Answer text (default 'Hello from fake Gemini.' unless function calls or a block are scripted). */
  text?: string;
  /** Thought summary parts (`thought: true`), sent when includeThoughts was asked. */
  thoughts?: string;
  functionCalls?: Array<{ name: string; args: Record<string, unknown> }>;
  finishReason?: 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'PROHIBITED_CONTENT' | 'BLOCKLIST' | 'SPII' | 'RECITATION' | 'OTHER';
  /** promptFeedback.blockReason: the prompt itself was blocked (no candidates). */
  blockReason?: 'SAFETY' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT';
  usage?: { prompt?: number; cached?: number; candidates?: number; thoughts?: number };
  /** End the stream without the chunk carrying finishReason. */
  omitEnd?: boolean;
  /** Characters per text part (default 6). */
  chunkSize?: number;
}

export interface FakeGeminiOptions {
  apiKey?: string;
}

const MODEL_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeVendor<FakeGeminiReply>> {
  const apiKey = options.apiKey ?? 'gemini-fake-key';
  return startFakeVendor<FakeGeminiReply>({ apiKey, basePath: '', defaultReply: {} }, async (exchange) => {
    const { request, reply, json, sse } = exchange;
    const error = (code: number, status: string, message: string) => json(code, { error: { code, message, status } });
    const match = MODEL_PATH.exec(request.path);
    if (!match || request.method !== 'POST') return error(404, 'NOT_FOUND', `Requested entity was not found: ${request.path}`);
    const sentKey = request.headers['x-goog-api-key'] ?? request.query.key;
    if (!sentKey)
      return error(
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    if (sentKey !== apiKey) return error(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    if (reply.status && reply.status >= 400) {
      const status =
        reply.status === 429
          ? 'RESOURCE_EXHAUSTED'
          : reply.status === 503
            ? 'UNAVAILABLE'
            : reply.status >= 500
              ? 'INTERNAL'
              : 'INVALID_ARGUMENT';
      return error(reply.status, status, reply.errorMessage ?? 'The fake vendor failed.');
    }
    const body = request.body ?? {};
    if (!Array.isArray(body.contents) || body.contents.length === 0)
      return error(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified');
    const model = decodeURIComponent(match[1]!);
    const includeThoughts = body.generationConfig?.thinkingConfig?.includeThoughts === true;

    const calls = reply.functionCalls ?? [];
    const text =
      reply.text ??
      (calls.length > 0 || reply.blockReason || (reply.finishReason && reply.finishReason !== 'STOP' && reply.finishReason !== 'MAX_TOKENS')
        ? ''
        : 'Hello from fake Gemini.');
    const thoughts = includeThoughts ? (reply.thoughts ?? '') : '';
    const usageMetadata = {
      promptTokenCount: reply.usage?.prompt ?? 15,
      ...(reply.usage?.cached !== undefined ? { cachedContentTokenCount: reply.usage.cached } : {}),
      candidatesTokenCount: reply.usage?.candidates ?? Math.max(1, Math.ceil(text.length / 4)),
      ...(reply.usage?.thoughts !== undefined ? { thoughtsTokenCount: reply.usage.thoughts } : {}),
      totalTokenCount:
        (reply.usage?.prompt ?? 15) + (reply.usage?.candidates ?? Math.max(1, Math.ceil(text.length / 4))) + (reply.usage?.thoughts ?? 0),
    };
    const finishReason = reply.finishReason ?? 'STOP';
    const candidate = (parts: unknown[], finish?: string) => ({
      content: { role: 'model', parts },
      ...(finish ? { finishReason: finish } : {}),
      index: 0,
    });
    const chunks: Array<Record<string, unknown>> = [];
    const meta = { modelVersion: model, responseId: 'fake-response' };
    if (reply.blockReason) {
      chunks.push({
        promptFeedback: { blockReason: reply.blockReason },
        usageMetadata: { promptTokenCount: usageMetadata.promptTokenCount, totalTokenCount: usageMetadata.promptTokenCount },
        ...meta,
      });
    } else {
      const size = reply.chunkSize ?? 6;
      // Streaming usage is cumulative; intermediate chunks carry the prompt count only.
      const partial = { promptTokenCount: usageMetadata.promptTokenCount, totalTokenCount: usageMetadata.promptTokenCount };
      for (const piece of pieces(thoughts, size * 3))
        chunks.push({ candidates: [candidate([{ text: piece, thought: true }])], usageMetadata: partial, ...meta });
      for (const piece of pieces(text, size)) chunks.push({ candidates: [candidate([{ text: piece }])], usageMetadata: partial, ...meta });
      if (calls.length > 0)
        chunks.push({
          candidates: [candidate(calls.map((call) => ({ functionCall: { name: call.name, args: call.args } })))],
          usageMetadata: partial,
          ...meta,
        });
      if (!reply.omitEnd)
        chunks.push({ candidates: [candidate(chunks.length === 0 ? [{ text: '' }] : [], finishReason)], usageMetadata, ...meta });
    }
    if (match[2] === 'generateContent') {
      const parts = [
        ...(thoughts ? [{ text: thoughts, thought: true }] : []),
        ...(text ? [{ text }] : []),
        ...calls.map((call) => ({ functionCall: call })),
      ];
      // Paced like the stream it replaces; a stream that would have ended early is a body cut short.
      return sendCompletionPaced(
        exchange,
        chunks.length,
        reply.blockReason ? chunks[0] : { candidates: [candidate(parts, finishReason)], usageMetadata, ...meta },
        { cut: reply.omitEnd },
      );
    }
    if (request.query.alt !== 'sse') return json(200, chunks);
    await sse(
      chunks.map((chunk) => ({ data: JSON.stringify(chunk) })),
      { lineEnd: '\r\n' },
    );
  });
}
