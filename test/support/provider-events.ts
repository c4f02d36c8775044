import { Cancellation } from '../../src/domain/generation/cancellation';
import type { CanonicalEvent, CanonicalRequest, TextProvider } from '../../src/domain/generation/canonical';
import { dropHints } from '../../src/domain/generation/hints';
import { TOP_LEVEL_HINT_NAMES } from '../../src/protocols/field-policy';

/**
 * Runs a provider to the end: the canonical events it yielded (not the prompt usage it reported
 * first) and the error it threw (or null). The request is first settled as the pipeline settles
 * it: without the hints the provider says it does not take.
 */
export async function runProvider(
  provider: TextProvider,
  req: CanonicalRequest,
  signal: Cancellation = new Cancellation(),
): Promise<{ events: CanonicalEvent[]; error: unknown }> {
  const events: CanonicalEvent[] = [];
  const settled = dropHints(req, provider.hints(req), TOP_LEVEL_HINT_NAMES).request;
  try {
    for await (const event of provider.generate(settled, signal))
      if (event.type !== 'input-usage' && event.type !== 'served-by') events.push(event);
    return { events, error: null };
  } catch (error) {
    return { events, error };
  }
}

export const textOf = (events: CanonicalEvent[]): string => events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('');

/** The last event, which must be the finish. */
export function finishOf(events: CanonicalEvent[]): Extract<CanonicalEvent, { type: 'finish' }> {
  const last = events[events.length - 1];
  if (last?.type !== 'finish') throw new Error(`last event is ${last?.type}`);
  return last;
}
