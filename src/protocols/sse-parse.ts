/**
 * The one Server-Sent Events decoder (WHATWG "event stream interpretation"), used by every
 * provider. Bytes or strings in, `{event, data}` records out; chunk boundaries may fall
 * anywhere, including inside a UTF-8 character or between the `\r` and `\n` of a CRLF.
 *
 * One deliberate leniency: at the end of the stream, an event whose data lines were complete
 * but which lacked its closing blank line is still dispatched (some servers omit it). A line
 * cut in the middle is never dispatched, so a truncated JSON payload never reaches a codec.
 */

import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** The `event:` field, or `message` when absent (the SSE default). */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen, if any. */
  id?: string;
}

export class SseDecoder {
  /**
   * Node's StringDecoder rather than TextDecoder: it holds a character cut between chunks just
   * as well, and an ASCII chunk (nearly every stream) becomes a one-byte string at once, where
   * TextDecoder's streaming mode goes through ICU and answers two-byte strings, slower to scan
   * and to JSON.parse.
   */
  private readonly utf8 = new StringDecoder('utf8');
  /** Text of the current, not yet terminated line. */
  private line = '';
  /** No text seen yet: a byte order mark leading the stream is dropped (the standard says so; TextDecoder did it). */
  private atStart = true;
  /** The previous chunk ended with `\r`: a `\n` starting the next one belongs to it. */
  private afterCR = false;
  private eventType = '';
  /** The event's `data` lines joined with `\n` (null: none yet); one line is the usual case, so no array. */
  private data: string | null = null;
  private lastId: string | undefined;

  /** Feeds a chunk; returns the events it completed, appended to `into` when given (several chunks, one array). */
  push(chunk: Uint8Array | string, into: SseEvent[] = []): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.utf8.write(chunk as Buffer);
    if (this.atStart && text.length > 0) {
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return this.scan(text, into);
  }

  /** Ends the stream; returns a last event whose lines were complete (see above). */
  end(): SseEvent[] {
    const events = this.scan(this.utf8.end(), []);
    // An unterminated final line is incomplete by definition: drop it.
    this.line = '';
    if (this.data !== null) events.push(this.dispatch()!);
    return events;
  }

  /**
   * Cuts the text into lines with indexOf (a vectorised search) rather than a loop over its
   * characters; a line end is `\n`, `\r\n` or a lone `\r`.
   */
  private scan(text: string, events: SseEvent[]): SseEvent[] {
    const length = text.length;
    let start = 0;
    if (this.afterCR && length > 0) {
      // The LF of a CRLF split across chunks: already handled by the CR.
      this.afterCR = false;
      if (text.charCodeAt(0) === 10 /* \n */) start = 1;
    }
    // The next CR, searched again only once passed (-1: none left in the text).
    let cr = text.indexOf('\r', start);
    while (start < length) {
      const lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 < length) next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
        else {
          next = length;
          this.afterCR = true;
        }
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else {
        this.line += text.slice(start);
        break;
      }
      this.takeLine(this.line === '' ? text.slice(start, end) : this.line + text.slice(start, end), events);
      this.line = '';
      start = next;
    }
    return events;
  }

  private takeLine(line: string, events: SseEvent[]): void {
    if (line === '') {
      const event = this.dispatch();
      if (event) events.push(event);
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return; // comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + (line.charCodeAt(colon + 1) === 32 /* space */ ? 2 : 1));
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data = this.data === null ? value : `${this.data}\n${value}`;
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
    const data = this.data;
    this.eventType = '';
    this.data = null;
    // Per the standard, an event without data lines is not dispatched.
    if (data === null) return null;
    const event: SseEvent = { event: type || 'message', data };
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
