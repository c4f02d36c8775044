/**
 * The one Server-Sent Events decoder (WHATWG "event stream interpretation"), used by every
 * provider. Bytes or strings in, `{event, data}` records out; chunk boundaries may fall
 * anywhere, including inside a UTF-8 character or between the `\r` and `\n` of a CRLF.
 *
 * One deliberate leniency: at the end of the stream, an event whose data lines were complete
 * but which lacked its closing blank line is still dispatched (some servers omit it). A line
 * cut in the middle is never dispatched, so a truncated JSON payload never reaches a codec.
 */

export interface SseEvent {
  /** The `event:` field, or `message` when absent (the SSE default). */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen, if any. */
  id?: string;
}

/** TextDecoder's option for a chunk that may end inside a character (one object, not one per chunk). */
const STREAMING = { stream: true } as const;

export class SseDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  /** Text of the current, not yet terminated line. */
  private line = '';
  /** The previous chunk ended with `\r`: a `\n` starting the next one belongs to it. */
  private afterCR = false;
  private eventType = '';
  private dataLines: string[] = [];
  private lastId: string | undefined;

  /** Feeds a chunk; returns the events it completed, appended to `into` when given (several chunks, one array). */
  push(chunk: Uint8Array | string, into: SseEvent[] = []): SseEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.utf8.decode(chunk, STREAMING);
    return this.scan(text, into);
  }

  /** Ends the stream; returns a last event whose lines were complete (see above). */
  end(): SseEvent[] {
    const events = this.scan(this.utf8.decode(), []);
    // An unterminated final line is incomplete by definition: drop it.
    this.line = '';
    if (this.dataLines.length > 0) events.push(this.dispatch()!);
    return events;
  }

  private scan(text: string, events: SseEvent[]): SseEvent[] {
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch === 10 /* \n */) {
        if (this.afterCR && i === 0 && this.line === '') {
          // The LF of a CRLF split across chunks: already handled by the CR.
          this.afterCR = false;
          start = 1;
          continue;
        }
        this.line += text.slice(start, i);
        this.takeLine(events);
        start = i + 1;
      } else if (ch === 13 /* \r */) {
        this.line += text.slice(start, i);
        this.takeLine(events);
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.afterCR = true;
        }
        start = i + 1;
      }
    }
    if (start < text.length) {
      this.line += text.slice(start);
      this.afterCR = false;
    }
    return events;
  }

  private takeLine(events: SseEvent[]): void {
    const line = this.line;
    this.line = '';
    this.afterCR = false;
    if (line === '') {
      const event = this.dispatch();
      if (event) events.push(event);
      return;
    }
    if (line.startsWith(':')) return; // comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataLines.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        // `retry` and unknown fields mean nothing to a one-shot request.
        break;
    }
  }

  private dispatch(): SseEvent | null {
    const type = this.eventType;
    const data = this.dataLines;
    this.eventType = '';
    this.dataLines = [];
    // Per the standard, an event without data lines is not dispatched.
    if (data.length === 0) return null;
    const event: SseEvent = { event: type || 'message', data: data.join('\n') };
    if (this.lastId !== undefined) event.id = this.lastId;
    return event;
  }
}

/**
 * Decodes a byte (or string) stream into SSE events, yielded as the batch each chunk completed
 * (empty batches skipped): a consumer handles a whole packet's events in one step instead of
 * one async-iteration round trip (promise, result object, resumption) per event.
 */
export async function* parseSseBatches(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent[], void, undefined> {
  const decoder = new SseDecoder();
  for await (const chunk of source) {
    const events = decoder.push(chunk);
    if (events.length > 0) yield events;
  }
  const last = decoder.end();
  if (last.length > 0) yield last;
}
