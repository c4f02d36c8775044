import { countTokensExactly } from '../billing/estimate';
import type { CanonicalEvent } from './canonical';

const count = countTokensExactly;

/** What a generation delivered, as far as charging a cut stream needs it: the texts it showed and how many events. */
export class DeliveryTally {
  answerText = '';
  reasoningText = '';
  toolArguments = '';
  events = 0;

  note(event: CanonicalEvent): void {
    this.events++;
    if (event.type === 'text-delta') this.answerText += event.text;
    else if (event.type === 'reasoning-delta') this.reasoningText += event.text;
    else if (event.type === 'tool-call-delta') this.toolArguments += event.argumentsDelta;
    else if (event.type === 'tool-call-start') this.toolArguments += event.name;
    // The model wrote the call a vendor then made (or asks approval for) as it writes a tool call.
    else if (event.type === 'mcp-item' && (event.item.kind === 'call' || event.item.kind === 'approval_request'))
      this.toolArguments += event.item.name + event.item.arguments;
  }

  /** Tokens of the answer the client can see (text and tool calls, not reasoning). */
  visibleAnswerTokens(): number {
    return count(this.answerText) + count(this.toolArguments);
  }

  deliveredOutputTokens(): number {
    return this.visibleAnswerTokens() + count(this.reasoningText);
  }
}
