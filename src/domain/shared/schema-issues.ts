import type { z } from 'zod';

/** Where in a configuration document a value sits: `plans[1].models`. */
export type FieldPath = readonly (string | number)[];

export function formatFieldPath(path: FieldPath, root: string): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out === '' ? part : `.${part}`;
  return out === '' ? root : out;
}

/** One zod issue as "<field> <what is wrong>", for start-up messages about configuration files. */
export function describeSchemaIssue(issue: z.core.$ZodIssue, root: string): string {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  if (issue.code === 'unrecognized_keys') return `${formatFieldPath([...path, issue.keys[0]], root)} is not a known field`;
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input'))
    return `${formatFieldPath(path, root)} must be of type ${issue.expected}`;
  return `${formatFieldPath(path, root)} ${issue.message}`;
}
