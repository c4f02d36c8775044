import { parseArgs } from 'node:util';

/** A wrong command line: the message says what to type instead (exit code 2). */
export class UsageError extends Error {}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;
export type ParsedOptions = Record<string, string | boolean | undefined>;

/** `util.parseArgs` in strict mode, with its errors turned into one-line usage errors. */
export function parseOptions(command: string, args: readonly string[], options: OptionSpec): ParsedOptions {
  try {
    const { values, positionals } = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
    if (positionals.length > 0) throw new UsageError(`${command}: unexpected argument '${positionals[0]}'`);
    return values as ParsedOptions;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // Node's messages name the option ("Unknown option '--nmae'"); keep only the first line.
    throw new UsageError(`${command}: ${String((error as Error).message).split(/\n| To specify/)[0]}`);
  }
}

export function requireString(command: string, values: ParsedOptions, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`${command}: --${name} is required`);
  return value;
}

export function optionalString(values: ParsedOptions, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
