/**
 * Periods of whole UTC days, as the spend and request-log pages ask for them: the last 7, 30 or
 * 90 days ending today, or a custom first and last day. Days are `YYYY-MM-DD` in UTC, both ends
 * included; the request log takes instants, so a day range becomes [first 00:00Z, day after last 00:00Z).
 */
export type PeriodChoice = '7' | '30' | '90' | 'custom';

export interface Period {
  from: string;
  to: string;
}

/** The longest period a page asks for (the server's bound too). */
export const MAX_PERIOD_DAYS = 400;
const DAY_MS = 86_400_000;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The `days` UTC days ending with today's. */
export function lastDays(days: number, now: Date = new Date()): Period {
  return { from: utcDay(new Date(now.getTime() - (days - 1) * DAY_MS)), to: utcDay(now) };
}

function parseDay(text: string): number | null {
  const match = DAY.exec(text);
  if (!match) return null;
  const at = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return utcDay(new Date(at)) === text ? at : null;
}

/** Why a custom period cannot be asked for, in the words of its form; null when it can. */
export function customPeriodProblem(period: Period): string | null {
  const from = parseDay(period.from);
  const to = parseDay(period.to);
  if (from === null) return 'First day must be a date (YYYY-MM-DD).';
  if (to === null) return 'Last day must be a date (YYYY-MM-DD).';
  if (to < from) return 'Last day must not be before the first day.';
  if ((to - from) / DAY_MS + 1 > MAX_PERIOD_DAYS) return `A period can be at most ${MAX_PERIOD_DAYS} days long.`;
  return null;
}

/** The instants that bound a period of days: from its first day's start to the next day after its last. */
export function periodInstants(period: Period): { from: string; to: string } {
  const to = parseDay(period.to);
  return { from: `${period.from}T00:00:00.000Z`, to: to === null ? `${period.to}T00:00:00.000Z` : new Date(to + DAY_MS).toISOString() };
}

/** How many days a period spans (both ends included). */
export function periodDays(period: Period): number {
  const from = parseDay(period.from);
  const to = parseDay(period.to);
  return from === null || to === null ? 0 : (to - from) / DAY_MS + 1;
}
