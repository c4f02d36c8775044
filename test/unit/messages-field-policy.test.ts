import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MESSAGES_FIELD_POLICY, NESTED_FIELD_POLICIES, TOOL_FIELD_POLICY } from '../../src/protocols/anthropic-messages/field-policy';

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

/** The cache-breakpoint table says what the nested policies do with each block's `cache_control`. */
test("docs/api.md's cache-breakpoint table gives each block's cache_control the disposition the code gives it", () => {
  const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Cache breakpoints'), doc.indexOf('## Choices in detail'));
  const rows = Object.fromEntries([...section.matchAll(/^\| `([a-z_]+)\.cache_control` \| ([a-z-]+) \|/gm)].map((m) => [m[1], m[2]]));
  const { text, tool_use, tool_result, mcp_tool_use, mcp_tool_result } = NESTED_FIELD_POLICIES;
  expect(rows).toEqual({
    tool: TOOL_FIELD_POLICY.cache_control,
    text: text.cache_control,
    tool_use: tool_use.cache_control,
    tool_result: tool_result.cache_control,
    mcp_tool_use: mcp_tool_use.cache_control,
    mcp_tool_result: mcp_tool_result.cache_control,
  });
});
