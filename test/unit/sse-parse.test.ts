import { parseSseBatches, SseDecoder, type SseEvent } from '../../src/protocols/sse-parse';

/** The SSE decoder every provider relies on: chunk boundaries anywhere, CRLF, comments, multi-line data. */

const STREAM =
  ': keep-alive comment\n' +
  'event: message_start\n' +
  'data: {"type":"message_start","text":"héllo – 👋"}\n' +
  '\n' +
  'data: first line\n' +
  'data: second line\n' +
  'id: 7\n' +
  'retry: 1000\n' +
  '\n' +
  'event: ping\n' +
  'data:no-space\n' +
  '\n' +
  'data: [DONE]\n' +
  '\n';

const EXPECTED: SseEvent[] = [
  { event: 'message_start', data: '{"type":"message_start","text":"héllo – 👋"}' },
  { event: 'message', data: 'first line\nsecond line', id: '7' },
  { event: 'ping', data: 'no-space', id: '7' },
  { event: 'message', data: '[DONE]', id: '7' },
];

function decodeChunks(chunks: Array<Uint8Array | string>): SseEvent[] {
  const decoder = new SseDecoder();
  const events = chunks.flatMap((chunk) => decoder.push(chunk));
  return [...events, ...decoder.end()];
}

describe('SseDecoder', () => {
  it('decodes a whole stream: events, default type, multi-line data, ids, comments', () => {
    expect(decodeChunks([STREAM])).toEqual(EXPECTED);
  });

  it('gives the same events whatever the chunk boundaries (bytes split inside UTF-8 characters too)', () => {
    const bytes = Buffer.from(STREAM, 'utf8');
    for (let size = 1; size <= 17; size++) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      expect(decodeChunks(chunks)).toEqual(EXPECTED);
    }
    // Every single split point, in two pieces.
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(decodeChunks([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(EXPECTED);
    }
  });

  it('accepts CRLF and lone CR line ends, including a CRLF split across chunks', () => {
    const crlf = STREAM.replace(/\n/g, '\r\n');
    expect(decodeChunks([crlf])).toEqual(EXPECTED);
    const bytes = Buffer.from(crlf, 'utf8');
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(decodeChunks([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(EXPECTED);
    }
    expect(decodeChunks([STREAM.replace(/\n/g, '\r')])).toEqual(EXPECTED);
    // CR at the end of one chunk then LF: one line end, not an empty line (no premature dispatch).
    expect(decodeChunks(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual([{ event: 'message', data: 'a\nb' }]);
  });

  it('drops one byte order mark leading the stream, whole or split across chunks, and no other', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const bytes = Buffer.concat([bom, Buffer.from(STREAM, 'utf8')]);
    expect(decodeChunks([bytes])).toEqual(EXPECTED);
    expect(decodeChunks([bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)])).toEqual(EXPECTED);
    expect(decodeChunks([Buffer.alloc(0), bytes])).toEqual(EXPECTED);
    expect(decodeChunks(['\ufeffdata: x\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
    // Only the stream's first character: a later one belongs to the line.
    expect(decodeChunks(['data: x\n\n', '\ufeffdata: y\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('ignores comments and events without data, and resets the event type after each event', () => {
    expect(decodeChunks([':one\n:two\n\nevent: lonely\n\ndata: x\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('keeps a data value with colons and strips only one leading space', () => {
    expect(decodeChunks(['data:  two spaces: kept\n\n'])).toEqual([{ event: 'message', data: ' two spaces: kept' }]);
    expect(decodeChunks(['data\n\n'])).toEqual([{ event: 'message', data: '' }]);
  });

  it('at the end, dispatches complete lines without a closing blank line but never a cut line', () => {
    expect(decodeChunks(['data: {"complete":true}\n'])).toEqual([{ event: 'message', data: '{"complete":true}' }]);
    expect(decodeChunks(['data: {"complete":true}\n\ndata: {"cut'])).toEqual([{ event: 'message', data: '{"complete":true}' }]);
  });
});

describe('parseSseBatches', () => {
  it('decodes an async byte stream', async () => {
    async function* source() {
      const bytes = Buffer.from(STREAM, 'utf8');
      for (let i = 0; i < bytes.length; i += 5) yield bytes.subarray(i, i + 5);
    }
    const events: SseEvent[] = [];
    for await (const batch of parseSseBatches(source())) events.push(...batch);
    expect(events).toEqual(EXPECTED);
  });

  it("yields each chunk's completed events as one batch, and nothing for a chunk that completes none", async () => {
    async function* source() {
      yield 'data: a\n\ndata: b\n\ndata: c';
      yield '\n';
      yield '\n';
    }
    const batches: string[][] = [];
    for await (const batch of parseSseBatches(source())) batches.push(batch.map((e) => e.data));
    expect(batches).toEqual([['a', 'b'], ['c']]);
  });
});
