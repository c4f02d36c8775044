import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MESSAGES_FIELD_POLICY } from '../../src/protocols/anthropic-messages/field-policy';

/** The Messages field policy is stated once in the code and once in docs/api.md: the two must say the same. */
test('docs/api.md lists every Messages field with the disposition the code gives it', () => {
  const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
  const start = doc.indexOf('#### Messages fields\n');
  expect(start).toBeGreaterThan(-1);
  const section = doc.slice(start, doc.indexOf('\n### ', start));
  const rows = [...section.matchAll(/^\| `([a-z_]+)` \| ([a-z-]+) \|/gm)].map((m) => [m[1], m[2]]);
  expect(Object.fromEntries(rows)).toEqual(MESSAGES_FIELD_POLICY);
  expect(rows).toHaveLength(Object.keys(MESSAGES_FIELD_POLICY).length);
});
