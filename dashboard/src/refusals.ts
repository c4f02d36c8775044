import { formatMicro } from './money';

/**
 * The API names fields as its schema does (`input.monthlySpendLimitMicro`) and amounts in
 * micro-dollars. A form shows its refusals in its own words: the field's label, dollars.
 * `labels` maps the API's field names (the last part of the path) to the form's labels.
 */
export function refusalInWords(message: string, labels: Record<string, string>): string {
  let named = false;
  let words = message.replace(/\b(?:[A-Za-z_]+\.)+([A-Za-z_]+)\b/g, (path: string, field: string) => {
    const label = labels[field];
    if (label === undefined) return path;
    named = true;
    return label;
  });
  if (!named) return words;
  // "a decimal string of micro-dollars (for example "25000000" for $25) or null": what the field takes, in dollars.
  if (/must be a decimal string of micro-dollars/.test(words))
    return words.replace(/must be a decimal string of micro-dollars.*$/, 'must be an amount in dollars, like 25 or 12.50.');
  const amounts = /micro-dollars/.test(words);
  words = words
    // "1000000 ($1)" or a bare "0": every amount once, formatted as everywhere else in the page.
    .replace(/(?<![$.,\d])(\d+)(?: \(\$[\d,.]+\))?/g, (all: string, micro: string) => (amounts ? formatMicro(micro) : all))
    .replace(/ micro-dollars\b/g, '');
  return /[.!?]$/.test(words) ? words : `${words}.`;
}
