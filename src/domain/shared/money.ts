import { badRequest, type FieldKey } from './errors';

/** Money is integer micro-dollars (bigint) inside; decimal strings at the API boundary. */
const DECIMAL_INTEGER = /^(0|[1-9][0-9]*)$/;

/**
 * A money field as every plane sends it: a decimal string of micro-dollars. `what` names it in
 * the user's words for the refusal ("Monthly limit"); `field` is its domain key.
 */
export function requireMicroString(value: unknown, what: string, field: FieldKey): bigint {
  const micro = parseMicroString(value);
  if (micro === undefined)
    throw badRequest(`${what} must be a whole number of micro-dollars written as a string ("25000000" for $25)`, { field });
  return micro;
}

/** Parses a decimal string of micro-dollars ("1500000"); undefined when it is not one. */
export function parseMicroString(value: unknown): bigint | undefined {
  if (typeof value !== 'string' || value.length > 30 || !DECIMAL_INTEGER.test(value)) return undefined;
  return BigInt(value);
}

/** Exact conversion of a USD decimal string ("0.15", "2.5") into micro-dollars × 10^scale. */
export function parseUsdDecimal(value: string, extraScale = 0): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(value);
  if (!match) throw new Error(`not a decimal amount: ${value}`);
  const scale = 6 + extraScale;
  const fraction = (match[2] ?? '').padEnd(scale, '0');
  if (fraction.length > scale) throw new Error(`too many decimal places: ${value}`);
  return BigInt(match[1]) * 10n ** BigInt(scale) + BigInt(fraction || '0');
}

/** Formats `amount / 10^scale` as a plain decimal string without trailing zeros. */
export function formatScaled(amount: bigint, scale: number): string {
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
