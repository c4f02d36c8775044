import { formatMicro } from './money';
import { formatTime } from './parts/time';

/** A key event as the API sends it: `data` holds micro-dollar strings and ISO times by kind. */
export interface KeyEventLike {
  kind: string;
  actorUserId?: string | null;
  data: Record<string, unknown>;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const limit = (micro: unknown): string => (text(micro) === null ? 'no limit' : formatMicro(text(micro)));

/**
 * One key event in plain words: dollars instead of micro-dollars, dates instead of timestamps,
 * names instead of ids. An event of a kind this page does not know keeps its own name.
 */
export function describeKeyEvent(event: KeyEventLike): string {
  const d = event.data;
  switch (event.kind) {
    case 'created': {
      const withLimit =
        text(d.monthly_spend_limit_micro) === null ? 'no monthly limit' : `a monthly limit of ${limit(d.monthly_spend_limit_micro)}`;
      return `Created as “${text(d.name) ?? '?'}”, with ${withLimit}.`;
    }
    case 'renamed':
      return `Renamed from “${text(d.old_name) ?? '?'}” to “${text(d.new_name) ?? '?'}”.`;
    case 'spend_limit_changed': {
      if (text(d.new_limit_micro) === null) return `Monthly limit removed (it was ${limit(d.old_limit_micro)}).`;
      if (text(d.old_limit_micro) === null) return `Monthly limit set to ${limit(d.new_limit_micro)} (there was none).`;
      return `Monthly limit changed from ${limit(d.old_limit_micro)} to ${limit(d.new_limit_micro)}.`;
    }
    case 'spend_limit_reached':
      return `Monthly limit of ${limit(d.limit_micro)} reached with ${formatMicro(text(d.spent_micro))} spent: requests are refused until ${formatTime(text(d.resets_at))}.`;
    case 'revoked':
      return 'Revoked: requests with this key are refused from now on.';
    default:
      return event.kind.replace(/_/g, ' ');
  }
}

/** Who caused an event: the signed-in person, someone else of the account, or Tollgate itself. */
export function eventActor(event: KeyEventLike, myUserId: string | null | undefined): string {
  if (!event.actorUserId) return 'by Tollgate';
  return event.actorUserId === myUserId ? 'by you' : 'by another user of the account';
}
