/** Time source, injected so that expiry and UTC month rollover are testable. */
export interface Clock {
  now(): Date;
  /** now() as milliseconds since the epoch, without making a Date (per-request paths call it several times). */
  nowMs(): number;
}

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  nowMs(): number {
    return this.current.getTime();
  }
  set(at: Date): void {
    this.current = new Date(at.getTime());
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** `2026-11` for any instant in November 2026 UTC: the key of a billing month. */
export function utcMonthKey(at: Date): string {
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

let lastMonth = { fromMs: 0, untilMs: 0, key: '' };

/** utcMonthKey of an instant in ms; the month in use is remembered (a request asks for it more than once). */
export function utcMonthKeyOfMs(ms: number): string {
  if (ms >= lastMonth.fromMs && ms < lastMonth.untilMs) return lastMonth.key;
  const at = new Date(ms);
  lastMonth = {
    fromMs: Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1),
    untilMs: nextUtcMonthStart(at).getTime(),
    key: utcMonthKey(at),
  };
  return lastMonth.key;
}

/** First instant of the UTC month after `at`: when monthly limits reset. */
export function nextUtcMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

export const unixSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);
