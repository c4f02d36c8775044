/**
 * Input-token estimate for holds and token-window reservations. The hold must cover the largest
 * cost a request can have, so the estimate is an upper bound, never an approximation:
 *
 * - Text is bounded by its UTF-8 size: every vendor's tokenizer (byte-level BPE, or
 *   SentencePiece with byte fallback) makes tokens of at least one byte, so a prompt never has
 *   more tokens than bytes, whatever the vendor. No tokenizer runs on the request path: the
 *   o200k encoder holds tens of megabytes per process and its count would still need a margin
 *   for other vendors' tokenizers.
 * - Chat formats add tokens per message (role markers, separators: 3–4 with OpenAI) and per
 *   request (reply priming); 8 per message and 32 per request cover every vendor we serve.
 * - When the model's context length is known the estimate is capped by it: a provider cannot
 *   bill more input than the context holds. A prompt whose bound is above the context is
 *   counted (promptTokensOver) and refused when it does not fit, before anything is reserved.
 *
 * Settlement always charges the provider-reported usage, so a generous estimate costs the
 * caller nothing; it only makes a request with a nearly empty balance or limit wait for funds.
 */
export const TOKENS_PER_MESSAGE = 8;
export const TOKENS_PER_REQUEST = 32;

export interface PromptForEstimate {
  /** Every text the model reads: system/instructions, message contents, tool schemas and results, output schema. */
  readonly texts: readonly string[];
  /** Number of messages (conversation turns), for the per-message overhead. */
  readonly messages: number;
}

const textBytes = (prompt: PromptForEstimate): number => prompt.texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
const framingTokens = (prompt: PromptForEstimate): number => Math.max(0, prompt.messages) * TOKENS_PER_MESSAGE + TOKENS_PER_REQUEST;

/** Upper estimate of the input tokens a prompt will be billed for. */
export function estimateInputTokens(prompt: PromptForEstimate, options: { contextLength?: number } = {}): number {
  const estimate = textBytes(prompt) + framingTokens(prompt);
  return options.contextLength !== undefined && options.contextLength > 0 ? Math.min(estimate, options.contextLength) : estimate;
}

/** Characters encoded between two turns of the event loop (tens of milliseconds of work at worst). */
const CHARS_PER_TURN = 4 * 1024;

/**
 * Whether a prompt has more than `limit` tokens: its texts counted exactly (countTokensExactly)
 * plus the framing the bound adds, but only as far as the answer needs: until the count passes
 * the limit (true), or the count so far plus the bound of the rest is within it (false). So a
 * prompt just over its bound is settled after a few slices, and a huge one after about `limit`
 * tokens. A slice at a time, with the event loop turning between slices: counting a large
 * prompt does not hold up other requests.
 */
export async function promptTokensOver(prompt: PromptForEstimate, limit: number): Promise<boolean> {
  let counted = framingTokens(prompt);
  let uncountedBound = textBytes(prompt);
  for (const text of prompt.texts) {
    for (let at = 0; at < text.length;) {
      if (counted + uncountedBound <= limit) return false;
      if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const end = turnEnd(text, at);
      const slice = text.slice(at, end);
      uncountedBound -= Buffer.byteLength(slice, 'utf8');
      counted += countTokensExactly(slice);
      if (counted > limit) return true;
      at = end;
    }
  }
  return false;
}

/** Where a slice that starts at `at` ends: before a space near CHARS_PER_TURN (a word stays whole), else right there. */
function turnEnd(text: string, at: number): number {
  const end = at + CHARS_PER_TURN;
  if (end >= text.length) return text.length;
  for (let i = end; i > end - 512; i--) if (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x0a) return i;
  return sliceEnd(text, at, end);
}

type CountTokens = (text: string, options: { disallowedSpecial: Set<string> }) => number;
let countWithEncoder: CountTokens | null = null;
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * The encoder merges each run of letters (or of spaces, or of symbols) in time quadratic in the
 * run's length: a megabyte of one letter would take it hours. Runs longer than this are counted
 * in slices of this many characters (a count that can differ from the whole run's by a token
 * at each cut, which every vendor's own tokenizer differs by anyway).
 */
export const ENCODER_RUN_CHARS = 256;
const LONG_RUN = new RegExp(`\\S{${ENCODER_RUN_CHARS + 1},}|\\s{${ENCODER_RUN_CHARS + 1},}`, 'g');

/**
 * Tokens of a text by OpenAI's o200k_base encoding, for the few places that need a count and
 * not a bound: whether a prompt longer than its bound allows fits the context, the part of a
 * cut stream that was delivered, a reasoning count the vendor did not report, the sandbox
 * vendor's usage. The encoder is loaded on the first call only, so a gateway that never meets
 * those cases never holds it. Special-token lookalikes in user text (`<|endoftext|>`) count as
 * plain text, never refused.
 */
export function countTokensExactly(text: string): number {
  if (text === '') return 0;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const encode = (countWithEncoder ??= (require('gpt-tokenizer') as { countTokens: CountTokens }).countTokens);
  let total = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    const end = run.index + run[0].length;
    if (run.index > from) total += encode(text.slice(from, run.index), NO_SPECIAL_TOKENS);
    for (let at = run.index; at < end;) {
      const cut = sliceEnd(text, at, Math.min(at + ENCODER_RUN_CHARS, end));
      total += encode(text.slice(at, cut), NO_SPECIAL_TOKENS);
      at = cut;
    }
    from = end;
  }
  if (from < text.length) total += encode(from === 0 ? text : text.slice(from), NO_SPECIAL_TOKENS);
  return total;
}

/** `end`, moved one character on when it would split a surrogate pair (an emoji counted as two halves). */
function sliceEnd(text: string, start: number, end: number): number {
  const code = text.charCodeAt(end - 1);
  return end < text.length && end - start > 1 && code >= 0xd800 && code <= 0xdbff ? end + 1 : end;
}
