/**
 * `npm run bench:context`: what refusing a prompt over its model's context costs. Only a prompt
 * whose byte bound is over the context is tokenized (src/domain/billing/estimate.ts,
 * promptTokensOver): this times that count for 4 MB prompts (the largest body Tollgate reads by
 * default) against a 128,000-token and a 1,048,576-token context, for prose, for random
 * lowercase letters (the slowest text for the encoder, no word ever repeats) and for one letter
 * repeated. Reported, never asserted: the whole count's time, and the longest the event loop
 * waited between two of its turns meanwhile (what other requests on the instance wait at most).
 */
import { countTokensExactly, promptTokensOver } from '../src/domain/billing/estimate';

const MB4 = 4_000_000;

async function measure(name: string, text: string, limit: number): Promise<void> {
  let longestTurnMs = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    longestTurnMs = Math.max(longestTurnMs, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  const over = await promptTokensOver({ texts: [text], messages: 1 }, limit);
  running = false;
  const ms = performance.now() - started;
  console.log(
    `${name.padEnd(28)} limit ${String(limit).padStart(9)}  ${over ? 'over' : 'fits'}  ${ms.toFixed(0).padStart(6)} ms  longest turn ${longestTurnMs.toFixed(1)} ms`,
  );
}

async function main(): Promise<void> {
  countTokensExactly('load the encoder first');
  const prose = 'The quick brown fox jumps over the lazy dog, and the ledger balances at the end of the month. '
    .repeat(Math.ceil(MB4 / 95))
    .slice(0, MB4);
  const letters = Array.from({ length: MB4 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
  const one = 'x'.repeat(MB4);
  for (const limit of [128_000, 1_048_576]) {
    await measure('4 MB of prose', prose, limit);
    await measure('4 MB of random letters', letters, limit);
    await measure('4 MB of one letter', one, limit);
  }
}

void main();
