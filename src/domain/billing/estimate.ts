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
 *   bill more input than the context holds (a longer prompt is refused upstream, uncharged).
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

/** Upper estimate of the input tokens a prompt will be billed for. */
export function estimateInputTokens(prompt: PromptForEstimate, options: { contextLength?: number } = {}): number {
  const bytes = prompt.texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
  const estimate = bytes + Math.max(0, prompt.messages) * TOKENS_PER_MESSAGE + TOKENS_PER_REQUEST;
  return options.contextLength !== undefined && options.contextLength > 0 ? Math.min(estimate, options.contextLength) : estimate;
}

type CountTokens = (text: string, options: { disallowedSpecial: Set<string> }) => number;
let countWithEncoder: CountTokens | null = null;
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * Tokens of a text by OpenAI's o200k_base encoding, for the few places that need a count and
 * not a bound: the part of a cut stream that was delivered, a reasoning count the vendor did not
 * report, the sandbox vendor's usage. The encoder is loaded on the first call only, so a gateway
 * that never meets those cases never holds it. Special-token lookalikes in user text
 * (`<|endoftext|>`) count as plain text, never refused.
 */
export function countTokensExactly(text: string): number {
  if (text === '') return 0;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  countWithEncoder ??= (require('gpt-tokenizer') as { countTokens: CountTokens }).countTokens;
  return countWithEncoder(text, NO_SPECIAL_TOKENS);
}
