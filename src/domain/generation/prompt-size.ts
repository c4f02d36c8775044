import {
  countTokensExactly,
  estimateInputTokens,
  promptTokensOver,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_REQUEST,
  type PromptForEstimate,
} from '../billing/estimate';
import type { CanonicalRequest } from './canonical';
import { TextFieldRefusal } from './field-keys';

/** Every text the model reads, for the reservation estimate and the context check. */
export function promptForEstimate(request: CanonicalRequest): PromptForEstimate {
  const texts: string[] = [];
  for (const message of request.messages) {
    if (message.role === 'mcp') {
      texts.push(JSON.stringify(message.item));
      continue;
    }
    texts.push(message.content);
    if (message.role === 'assistant') for (const call of message.toolCalls) texts.push(call.name, call.arguments);
  }
  for (const tool of request.tools) texts.push(JSON.stringify(tool));
  if (request.responseFormat?.type === 'json_schema') texts.push(JSON.stringify(request.responseFormat.schema));
  return { texts, messages: request.messages.length };
}

/**
 * The input tokens a request reserves, after refusing a prompt longer than the model's context
 * (400 `text.prompt`, before anything is admitted or reserved). Most prompts are within the
 * context by their bound alone (UTF-8 bytes + framing, estimate.ts) and are never tokenized;
 * only a prompt whose bound is above the context is counted (o200k, as far as the answer needs).
 * One that fits reserves the whole context: no vendor bills more input than its context holds
 * (a longer prompt is refused upstream, uncharged), so that is a true bound whatever the vendor's
 * tokenizer. Whether the output limit must fit too is left to the vendor (docs/text.md).
 */
// A number when the bound fits (nearly every request: no promise on the way), else the count's promise.
export function inputTokensWithinContext(request: CanonicalRequest): number | Promise<number> {
  const prompt = promptForEstimate(request);
  const bound = estimateInputTokens(prompt);
  return bound <= request.model.contextLength ? bound : countedWithinContext(request, prompt);
}

async function countedWithinContext(request: CanonicalRequest, prompt: ReturnType<typeof promptForEstimate>): Promise<number> {
  const { model } = request;
  if (await promptTokensOver(prompt, model.contextLength)) {
    throw new TextFieldRefusal(
      'text.prompt',
      ({ fields }) =>
        `${fields['text.prompt']} is longer than the context of ${model.id}: more than ${model.contextLength} tokens (counted with the o200k tokenizer, with ${TOKENS_PER_MESSAGE} per message and ${TOKENS_PER_REQUEST} per request). Shorten it, or use a model with a longer context.`,
      () => ({ context_length: model.contextLength }),
    );
  }
  return model.contextLength;
}

/** Input tokens of the prompt as best counted (no safety margin): charged when a stream is cut. */
export function countPromptTokens(request: CanonicalRequest): number {
  return promptForEstimate(request).texts.reduce((sum, text) => sum + countTokensExactly(text), 0);
}
