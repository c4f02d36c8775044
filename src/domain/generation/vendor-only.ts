import { badRequest } from '../shared/errors';
import type { CanonicalContextEdit, CanonicalMessage, CanonicalRequest, CanonicalTool } from './canonical';

/**
 * What happens to settings only one vendor protocol carries (docs/api.md, "Field policy"),
 * once the model is known. Served over that protocol, they go to the vendor as sent. Served by
 * any other vendor:
 * - context edits are applied here when the result is exactly the vendor's: clearing thinking
 *   blocks of older turns is done; an edit that clears tool uses or compacts is applied only when
 *   it provably changes nothing (nothing to clear beyond `keep`, or a trigger the prompt cannot
 *   reach: its UTF-8 size, a bound no tokenizer exceeds, is below the trigger), and otherwise
 *   refused, since Tollgate cannot write the vendor's placeholders or summaries;
 * - a deferred tool is offered only once the conversation calls it (it stays out of the prompt
 *   until then, as with the vendor's tool search);
 * - the rest are hints that change neither the bill nor the validity of the answer: dropped, and
 *   named on the answer (`x-service-dropped-hints`).
 */

export interface SettledRequest {
  request: CanonicalRequest;
  /** The hints a vendor without them ignored, as the client named them. */
  droppedHints: readonly string[];
}

const NO_HINTS: readonly string[] = [];

/** `inputTokenBound`: an upper bound of the prompt's input tokens at any vendor (the hold's estimate). */
export function settleVendorOnly(request: CanonicalRequest, inputTokenBound: (request: CanonicalRequest) => number): SettledRequest {
  const settings = request.vendorOnly;
  if (!settings || request.model.protocol === settings.protocol) return { request, droppedHints: NO_HINTS };
  let messages = request.messages;
  for (const edit of settings.contextEdits) messages = applyContextEdit(edit, { ...request, messages }, inputTokenBound);
  const called = new Set(messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls.map((call) => call.name) : [])));
  const forced = typeof request.toolChoice === 'object' ? request.toolChoice.name : null;
  const offered = (tool: CanonicalTool) =>
    tool.type === 'mcp' || !settings.deferredTools.includes(tool.name) || called.has(tool.name) || tool.name === forced;
  const { vendorOnly: _settled, ...rest } = request;
  return { request: { ...rest, messages, tools: request.tools.filter(offered) }, droppedHints: settings.hints };
}

function applyContextEdit(
  edit: CanonicalContextEdit,
  request: CanonicalRequest,
  inputTokenBound: (request: CanonicalRequest) => number,
): CanonicalMessage[] {
  switch (edit.kind) {
    case 'clear_thinking':
      return edit.keepTurns === 'all' ? request.messages : clearOlderThinking(request.messages, edit.keepTurns);
    case 'clear_tool_uses': {
      const uses = toolUses(request.messages);
      const clearable = uses.filter((name) => !edit.excludeTools.includes(name)).length - edit.keep;
      const reached =
        edit.trigger.unit === 'tool_uses' ? uses.length >= edit.trigger.value : promptBound(request, inputTokenBound) >= edit.trigger.value;
      if (clearable <= 0 || !reached) return request.messages;
      throw inexactEdit(
        edit,
        request,
        'clear old tool results',
        'clear old tool results in the conversation yourself, or raise the trigger',
      );
    }
    case 'compact':
      if (promptBound(request, inputTokenBound) < edit.trigger.value) return request.messages;
      throw inexactEdit(edit, request, 'summarise the conversation', 'compact the conversation yourself, or raise the trigger');
  }
}

function inexactEdit(edit: CanonicalContextEdit, request: CanonicalRequest, action: string, remedy: string) {
  const model = request.model.id;
  return badRequest(
    `${edit.field}: this edit would ${action} here, which only the vendor of an Anthropic model does (Tollgate cannot do it exactly for model '${model}'); ${remedy}, remove the edit, or use an Anthropic model.`,
    {
      field: edit.field,
      model,
    },
  );
}

/** Tool uses of the conversation, oldest first (MCP calls count: they are tool uses too). */
function toolUses(messages: readonly CanonicalMessage[]): string[] {
  return messages.flatMap((m) =>
    m.role === 'assistant' ? m.toolCalls.map((call) => call.name) : m.role === 'mcp' && m.item.kind === 'call' ? [m.item.name] : [],
  );
}

/** The hold's bound, plus what it leaves out and a vendor still reads back (thinking of earlier turns). */
function promptBound(request: CanonicalRequest, inputTokenBound: (request: CanonicalRequest) => number): number {
  let reasoningBytes = 0;
  for (const message of request.messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.reasoning)
      reasoningBytes += Buffer.byteLength(block.text + (block.signature ?? '') + (block.redactedData ?? ''), 'utf8');
  }
  return inputTokenBound(request) + reasoningBytes;
}

/**
 * Thinking blocks stay in the `keep` most recent assistant turns and leave the older ones. A turn
 * is a run of assistant (and MCP) messages: a tool result or user message ends it.
 */
function clearOlderThinking(messages: readonly CanonicalMessage[], keep: number): CanonicalMessage[] {
  const out = [...messages];
  let turns = 0;
  let inTurn = false;
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i]!;
    const assistantSide = message.role === 'assistant' || message.role === 'mcp';
    if (assistantSide && !inTurn) turns++;
    inTurn = assistantSide;
    if (message.role === 'assistant' && turns > keep && message.reasoning.length > 0) out[i] = { ...message, reasoning: [] };
  }
  return out;
}
