import { countTokens } from 'gpt-tokenizer';

/**
 * Input-token estimate for holds. The hold must cover the largest cost a request can have,
 * so the estimate errs high:
 *
 * - Text is counted with OpenAI's o200k_base tokenizer (`gpt-tokenizer`). Other vendors'
 *   tokenizers (Anthropic, Gemini, open models) split the same text differently, typically
 *   within ±30% for prose and code, so the count is multiplied by 1.3 (rounded up).
 * - Chat formats add tokens per message (role markers, separators: 3–4 with OpenAI) and per
 *   request (reply priming); 8 per message and 32 per request cover every vendor we serve.
 * - Special-token lookalikes in user text (`<|endoftext|>`) are counted as plain text, never refused.
 * - Above LARGE_PROMPT_CHARS the tokenizer would block the event loop for too long, so the
 *   UTF-8 byte length is used instead: every byte-level BPE token covers at least one byte,
 *   so it is an upper bound for all vendors.
 * - When the model's context length is known the estimate is capped by it: a provider cannot
 *   bill more input than the context holds (a longer prompt is refused upstream, uncharged).
 *
 * Settlement always charges the provider-reported usage, so a generous estimate costs the
 * caller nothing; it only makes a request with a nearly empty balance or limit wait for funds.
 */
export const TOKENIZER_MARGIN_PERCENT = 130;
export const TOKENS_PER_MESSAGE = 8;
export const TOKENS_PER_REQUEST = 32;
export const LARGE_PROMPT_CHARS = 1_000_000;

export interface PromptForEstimate {
  /** Every text the model reads: system/instructions, message contents, tool schemas and results, output schema. */
  readonly texts: readonly string[];
  /** Number of messages (conversation turns), for the per-message overhead. */
  readonly messages: number;
}

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

function countTextTokens(texts: readonly string[]): number {
  const chars = texts.reduce((sum, text) => sum + text.length, 0);
  if (chars > LARGE_PROMPT_CHARS) return texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
  const counted = texts.reduce((sum, text) => sum + (text.length === 0 ? 0 : countTokens(text, NO_SPECIAL_TOKENS)), 0);
  return Math.ceil((counted * TOKENIZER_MARGIN_PERCENT) / 100);
}

/** Upper estimate of the input tokens a prompt will be billed for. */
export function estimateInputTokens(prompt: PromptForEstimate, options: { contextLength?: number } = {}): number {
  const estimate = countTextTokens(prompt.texts) + Math.max(0, prompt.messages) * TOKENS_PER_MESSAGE + TOKENS_PER_REQUEST;
  return options.contextLength !== undefined && options.contextLength > 0 ? Math.min(estimate, options.contextLength) : estimate;
}
