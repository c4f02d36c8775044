import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_TIERS } from '../../src/domain/limits/tiers';

const number = (n: number | bigint) => n.toLocaleString('en-US');

test('the one tier table of the docs (docs/limits.md, Tiers) states the default tiers of the code', () => {
  const doc = readFileSync(join(__dirname, '../../docs/limits.md'), 'utf8');
  const lines = doc.slice(doc.indexOf('## Tiers')).split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  const rows = lines.slice(start + 2, end).map((line) => line.slice(2, -2).split(' | '));
  expect(rows).toEqual(
    DEFAULT_TIERS.map((t) => [
      String(t.tier),
      `$${number(t.fromMicro / 1_000_000n)}`,
      number(t.requestsPerSecond),
      number(t.requestsPerMinute),
      number(t.tokensPerMinute),
      number(t.concurrentRequests),
    ]),
  );
  // Written once: no other doc repeats it.
  for (const other of ['api.md', 'operator.md', '../README.md'])
    expect(readFileSync(join(__dirname, '../../docs', other), 'utf8')).not.toContain('| tier | lifetime top-ups from |');
});
