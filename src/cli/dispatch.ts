import { loadConfig } from '../config';
import { ConfigError } from '../config/env';
import { ApiError, detailsForPlane } from '../domain/shared/errors';
import { CLI_FIELD_NAMES } from './field-names';
import { DatabaseUnreachableError } from '../infra/database';
import { ADMIN_USAGE, runAdmin } from './admin';
import { UsageError } from './args';
import { runMigrate } from './migrate';

/**
 * The gateway's modules (both planes, Apollo, Express) load only for `start`, so admin
 * commands start quickly. A require, not import(): the compiled output is CommonJS.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand, see above
const loadStart = (): typeof import('./start') => require('./start') as typeof import('./start');

export const USAGE = `Usage: tollgate [command]

Commands:
  start            start the gateway (the default; what npm start runs)
  migrate          apply pending database migrations and exit
  admin <command>  operator tasks on the database (tollgate admin --help)

Configuration comes from the environment (DATABASE_URL, TOLLGATE_LIMITS_FILE, ...; see docs/operator.md).
`;

/** One line for the operator: the reason, never a stack trace (LOG_LEVEL=debug adds it). */
export function describeFailure(error: unknown): string {
  if (error instanceof ConfigError) return `Configuration error: ${error.message}`;
  if (error instanceof DatabaseUnreachableError) return `${error.message} (check DATABASE_URL)`;
  if (error instanceof ApiError) return cliMessage(error);
  if (error instanceof UsageError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/** A domain refusal prefixed with the option it is about (`--monthly-limit-micro: Monthly limit must be…`). */
function cliMessage(error: ApiError): string {
  const field = detailsForPlane(error, CLI_FIELD_NAMES).field;
  return typeof field === 'string' && field.startsWith('--') ? `${field}: ${error.message}` : error.message;
}

/**
 * Runs one command line. Resolves to the exit code, or null for `start`, which keeps the
 * process alive until a signal.
 */
export async function runCli(argv: readonly string[], out: NodeJS.WritableStream = process.stdout): Promise<number | null> {
  const [command = 'start', ...rest] = argv;
  try {
    switch (command) {
      case 'start':
        if (rest.length > 0) throw new UsageError(`start takes no arguments, got '${rest.join(' ')}'`);
        {
          const config = loadConfig(); // a bad value fails before the gateway's modules load
          await loadStart().startGateway(config);
        }
        return null;
      case 'migrate':
        if (rest.length > 0) throw new UsageError(`migrate takes no arguments, got '${rest.join(' ')}'`);
        await runMigrate(loadConfig(), out);
        return 0;
      case 'admin': {
        if (rest.length === 0 || rest[0] === '--help' || rest[0] === 'help') {
          out.write(ADMIN_USAGE);
          return rest.length === 0 ? 2 : 0;
        }
        return await runAdmin(rest, () => loadConfig(), out);
      }
      case '--help':
      case '-h':
      case 'help':
        out.write(USAGE);
        return 0;
      default:
        throw new UsageError(`unknown command '${command}' (try: tollgate --help)`);
    }
  } catch (error) {
    process.stderr.write(`tollgate: ${describeFailure(error)}\n`);
    if (process.env.LOG_LEVEL === 'debug' && !(error instanceof ConfigError || error instanceof UsageError || error instanceof ApiError))
      console.error(error);
    return error instanceof UsageError ? 2 : 1;
  }
}
