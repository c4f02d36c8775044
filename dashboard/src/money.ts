/**
 * Money in the API is a decimal string of micro-dollars (1 dollar = 1,000,000). The dashboard
 * converts with integer arithmetic on the digits only, never through a float, so what a person
 * types is exactly what is sent.
 */

const DOLLARS = /^\$?\s*(\d{1,12})(?:\.(\d{0,6}))?$/;

/** "12.5" → "12500000"; `undefined` when the text is not a dollar amount with at most 6 decimals. */
export function dollarsToMicro(text: string): string | undefined {
  const match = DOLLARS.exec(text.trim());
  if (!match) return undefined;
  const micro = BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0'));
  return micro.toString();
}

/** "12500000" → "$12.50"; micro-dollar digits beyond cents are kept ("$0.000125"). */
export function formatMicro(micro: string | null | undefined): string {
  if (micro === null || micro === undefined || !/^-?\d+$/.test(micro)) return '—';
  const value = BigInt(micro);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = (abs / 1_000_000n).toLocaleString('en-US');
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${negative ? '−' : ''}$${whole}.${fraction}`;
}

/** The dollar text that `dollarsToMicro` reads back to the same micro-dollars (for form fields). */
export function microToDollarText(micro: string | null | undefined): string {
  return formatMicro(micro).replace(/^\$/, '').replace(/,/g, '');
}

/** A ratio for a meter; display only. */
export function microRatio(part: string, whole: string): number {
  const w = BigInt(whole);
  if (w <= 0n) return 0;
  return Number((BigInt(part) * 10_000n) / w) / 10_000;
}
