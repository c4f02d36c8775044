import type { CanonicalMessage, CanonicalRequest, CanonicalToolChoice } from '../../domain/generation/canonical';
import type {
  GeminiContent,
  GeminiGenerateContentRequest,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiThinkingConfig,
  GeminiToolConfig,
} from './types';

/**
 * Vendor side of the Gemini API (`streamGenerateContent?alt=sse`, or `generateContent` for a
 * whole answer): canonical request → request body (its answer is read by `stream-decoder.ts`).
 *
 * Choices:
 * - Schemas go as full JSON Schema (`parametersJsonSchema`, `responseJsonSchema`), not the
 *   OpenAPI subset of `parameters`/`responseSchema`, so client schemas pass unchanged.
 * - Thinking: effort → thinkingBudget low 1024 / medium 8192 / high 24576 / extra_high 32768,
 *   clamped to the model family's range; `adaptive` → -1 (dynamic); `disabled` → 0, or the
 *   family's minimum where thinking cannot be turned off (2.5 Pro). Thought summaries are
 *   requested (`includeThoughts`) and streamed as reasoning.
 * - Thought signatures are not sent back: optional for 2.5 models, and the canonical
 *   reasoning block cannot tell a Gemini signature from another vendor's.
 * - Gemini has no tool-call ids: ids are minted here, and tool results find their function
 *   name through the id of the call in the conversation.
 * - Hints: sampling and penalties are sent when present; the provider declares that it takes no
 *   others (Gemini has no parallel tool-call control), so the pipeline drops and names them.
 */

export const GEMINI_THINKING_BUDGETS = { low: 1024, medium: 8192, high: 24576, extra_high: 32768 } as const;

interface ThinkingRange {
  /** Budget that means "no thinking" (the minimum where it cannot be off). */
  off: number;
  min: number;
  max: number;
}

/** Published thinkingBudget ranges of the Gemini 2.5 families, most specific first. */
const THINKING_RANGES: ReadonlyArray<readonly [RegExp, ThinkingRange]> = [
  [/flash-lite/, { off: 0, min: 512, max: 24576 }],
  [/pro/, { off: 128, min: 128, max: 32768 }],
  [/.*/, { off: 0, min: 1, max: 24576 }],
];

const thinkingRange = (vendorModelId: string): ThinkingRange => THINKING_RANGES.find(([pattern]) => pattern.test(vendorModelId))![1];

/** `:streamGenerateContent?alt=sse`, or `:generateContent` when the client reads the answer whole. */
export function generateContentPath(vendorModelId: string, stream: boolean): string {
  // A catalog may spell the id the way Google's resource names do (`models/gemini-…`).
  const id = encodeURIComponent(vendorModelId.replace(/^models\//, ''));
  return stream ? `/v1beta/models/${id}:streamGenerateContent?alt=sse` : `/v1beta/models/${id}:generateContent`;
}

export function toGenerateContentRequest(request: CanonicalRequest): GeminiGenerateContentRequest {
  const { systemInstruction, contents } = toGeminiContents(request.messages);
  const body: GeminiGenerateContentRequest = { contents };
  if (systemInstruction) body.systemInstruction = { parts: [{ text: systemInstruction }] };

  const functions = request.tools.flatMap((tool) => (tool.type === 'function' ? [tool] : []));
  if (functions.length > 0) {
    body.tools = [
      {
        functionDeclarations: functions.map((tool) => ({
          name: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
    if (request.toolChoice !== undefined) body.toolConfig = toGeminiToolConfig(request.toolChoice);
  }

  const config: GeminiGenerationConfig = { maxOutputTokens: request.maxOutputTokens };
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.stop && request.stop.length > 0) config.stopSequences = request.stop;
  if (request.presencePenalty !== undefined) config.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined) config.frequencyPenalty = request.frequencyPenalty;
  const format = request.responseFormat;
  if (format && format.type !== 'text') {
    config.responseMimeType = 'application/json';
    if (format.type === 'json_schema') config.responseJsonSchema = format.schema;
  }
  const thinking = toGeminiThinking(request);
  if (thinking) config.thinkingConfig = thinking;
  body.generationConfig = config;
  return body;
}

/** System messages → `systemInstruction`; user/tool → `user`, assistant → `model`, consecutive same-role turns merged. */
export function toGeminiContents(messages: readonly CanonicalMessage[]): {
  systemInstruction: string | undefined;
  contents: GeminiContent[];
} {
  const callNames = new Map<string, string>();
  for (const message of messages) if (message.role === 'assistant') for (const call of message.toolCalls) callNames.set(call.id, call.name);

  const system: string[] = [];
  const contents: GeminiContent[] = [];
  const append = (role: 'user' | 'model', parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        if (message.content !== '') append('user', [{ text: message.content }]);
        break;
      case 'assistant': {
        const parts: GeminiPart[] = [];
        if (message.content !== '') parts.push({ text: message.content });
        for (const call of message.toolCalls) parts.push({ functionCall: { name: call.name, args: toolArgs(call.arguments, call.kind) } });
        append('model', parts);
        break;
      }
      case 'tool':
        append('user', [
          {
            functionResponse: {
              name: callNames.get(message.toolCallId) ?? message.toolCallId,
              response: toolResponse(message.content, message.isError),
            },
          },
        ]);
        break;
      case 'mcp':
        // Only tool listings get here (Gemini's capabilities refuse the rest), and they need no server.
        break;
    }
  }
  return { systemInstruction: system.length > 0 ? system.join('\n\n') : undefined, contents };
}

function toolArgs(args: string, kind: 'function' | 'custom'): Record<string, unknown> {
  if (kind === 'custom') return { input: args };
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { value: parsed };
  } catch {
    return { input: args };
  }
}

/** functionResponse.response must be an object: a JSON object result is sent as is, anything else wrapped. */
function toolResponse(content: string, isError: boolean): Record<string, unknown> {
  if (isError) return { error: content };
  try {
    const parsed: unknown = JSON.parse(content);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // plain text
  }
  return { result: content };
}

export function toGeminiToolConfig(choice: CanonicalToolChoice): GeminiToolConfig {
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
}

export function toGeminiThinking(request: CanonicalRequest): GeminiThinkingConfig | undefined {
  if (request.model.effort !== 'gemini-thinking') return undefined;
  const range = thinkingRange(request.model.vendorModelId);
  const { mode, effort, budgetTokens } = request.reasoning;
  if (mode === 'disabled') return { thinkingBudget: range.off };
  if (mode === 'adaptive' && budgetTokens === undefined) return { thinkingBudget: -1, includeThoughts: true };
  let wanted: number | undefined;
  if (budgetTokens !== undefined && mode === 'enabled') wanted = budgetTokens;
  else if (effort !== undefined || mode === 'enabled') wanted = GEMINI_THINKING_BUDGETS[effort ?? 'medium'];
  if (wanted === undefined) return { includeThoughts: true };
  const budget = Math.max(range.min, Math.min(wanted, range.max, request.maxOutputTokens));
  return { thinkingBudget: budget, includeThoughts: true };
}
