/**
 * Durations as the rate-limit headers show them, in the style OpenAI's API uses (Go's
 * `time.Duration` text): `850ms`, `1.5s`, `6m0s`, `1h2m3s`, `0s`.
 */

const SECOND_MS = 1_000;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/**
 * `ms` as reset-duration text. Fractions of a millisecond round UP: a reset reported a hair
 * early would invite a retry that is still refused. Under a second: whole milliseconds;
 * under a minute: seconds with up to 3 decimals, trailing zeros trimmed; from a minute on:
 * `XmYs` (with `Xh` in front from an hour on). Zero, negative or not finite: `0s`.
 */
export function formatResetDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return '0s';
  const total = Math.ceil(ms);
  if (total < SECOND_MS) return `${total}ms`;
  if (total < MINUTE_MS) return `${secondsText(total)}s`;
  const hours = Math.floor(total / HOUR_MS);
  const minutes = Math.floor((total % HOUR_MS) / MINUTE_MS);
  return `${hours > 0 ? `${hours}h` : ''}${minutes}m${secondsText(total % MINUTE_MS)}s`;
}

/** Whole milliseconds below a minute as seconds text: 1500 → `1.5`, 12000 → `12`, 1234 → `1.234`. */
function secondsText(ms: number): string {
  const whole = Math.floor(ms / SECOND_MS);
  const fraction = ms % SECOND_MS;
  if (fraction === 0) return String(whole);
  // Two rate-limit headers per answer format one: digits trimmed by arithmetic, not a regular expression.
  let digits = fraction;
  let width = 3;
  while (digits % 10 === 0) {
    digits /= 10;
    width--;
  }
  return `${whole}.${String(digits).padStart(width, '0')}`;
}

/** `Retry-After` in whole seconds: rounded up and at least 1, so a client never retries too early. */
export function retryAfterSeconds(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return 1;
  return Math.max(1, Math.ceil(ms / SECOND_MS));
}
