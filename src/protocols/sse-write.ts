/**
 * Server-Sent Events framing for the answers Tollgate streams (the decoder is `sse-parse.ts`).
 * JSON.stringify never emits a raw newline, so every payload fits on one `data:` line.
 */

/** Headers of every streamed answer; `no-transform` keeps proxies from buffering or compressing. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
};

/** `data: <json>` then a blank line: an event of the default type (Chat Completions chunks). */
export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** `event: <name>`, `data: <json>`, blank line: a named event (Responses, Messages). */
export function sseEvent(name: string, payload: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/** The Chat Completions end-of-stream sentinel. */
export const SSE_DONE = 'data: [DONE]\n\n';
