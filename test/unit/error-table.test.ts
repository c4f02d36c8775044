import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as errors from '../../src/domain/shared/errors';
import { ApiError, ERROR_CODES } from '../../src/domain/shared/errors';
import { ProviderError } from '../../src/domain/generation/errors';
import { concurrencyRefusal } from '../../src/domain/limits/refusals';
import { cancelledError } from '../../src/providers/transport/errors';
import { REST_FIELD_NAMES } from '../../src/rest/field-names';
import { GRAPHQL_FIELD_NAMES } from '../../src/graphql/field-names';
import { CLI_FIELD_NAMES } from '../../src/cli/field-names';

/** The error table of docs/api.md, row by row: status, code, when, details. */
function documentedRows(): string[][] {
  const doc = readFileSync(join(__dirname, '../../docs/api.md'), 'utf8');
  const lines = doc.slice(doc.indexOf('#### Error codes')).split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  // Header and separator rows off; each row's cells without the outer pipes.
  return lines.slice(start + 2, end).map((line) =>
    line
      .slice(2, -2)
      .split(' | ')
      .map((cell) => cell.trim()),
  );
}

test('docs/api.md lists exactly the error table of the code, in its order and words', () => {
  const expected = Object.entries(ERROR_CODES).map(([code, e]) => [String(e.status), `\`${code}\``, e.when, e.details]);
  expect(documentedRows()).toEqual(expected);
});

test('every code of the table is made by a factory, and every factory makes a code of the table', () => {
  const made = new Map<string, number>();
  const note = (error: ApiError) => made.set(error.code, error.status);
  // Each named factory once, with arguments of its shape.
  const calls: Record<string, () => ApiError> = {
    badRequest: () => errors.badRequest('x', { field: 'x' }),
    invalidToken: () => errors.invalidToken(),
    sessionRequired: () => errors.sessionRequired(),
    walletKeyRequired: () => errors.walletKeyRequired(),
    notFound: () => errors.notFound('x'),
    modelNotAvailable: () => errors.modelNotAvailable('m'),
    conflict: () => errors.conflict('x', 'account.email'),
    idempotencyConflict: () => errors.idempotencyConflict(),
    keyRevoked: () => errors.keyRevoked('key_1', new Date()),
    videoNotReady: () => errors.videoNotReady('x', 'queued'),
    videoExpired: () => errors.videoExpired('vid_1', null),
    payloadTooLarge: () => errors.payloadTooLarge('x', 'max_body_bytes', 1),
    unsupportedMediaType: () => errors.unsupportedMediaType('x'),
    rangeNotSatisfiable: () => errors.rangeNotSatisfiable('bytes=9-', 1),
    internalError: () => errors.internalError(),
    unavailable: () => errors.unavailable('x'),
    insufficientBalance: () => errors.insufficientBalance(1n, '0'),
    keySpendLimitReached: () => errors.keySpendLimitReached(1n, 1n, 0),
    planAllowanceExhausted: () => errors.planAllowanceExhausted(1n, 1n, 0),
    tooManySignIns: () => errors.tooManySignIns(1000),
    storageUnavailable: () => errors.storageUnavailable('video storage', 'x'),
    deploymentsUnavailable: () => errors.deploymentsUnavailable('m', 1),
    upstreamRateLimited: () => errors.upstreamRateLimited('m', 1),
  };
  const exportedFactories = Object.entries(errors)
    .filter(
      ([name, value]) =>
        typeof value === 'function' && name !== 'ApiError' && name !== 'detailsForPlane' && name !== 'storageErrorAsApiError',
    )
    .map(([name]) => name)
    .sort();
  expect(Object.keys(calls).sort()).toEqual(exportedFactories);
  for (const call of Object.values(calls)) note(call());
  // The two subclasses, made by their own factories.
  note(new ProviderError('x', 'vendor'));
  note(cancelledError('vendor'));
  note(
    concurrencyRefusal(
      { kind: 'prepaid', tier: 1, requestsPerSecond: null, requestsPerMinute: 1, tokensPerMinute: null, concurrentRequests: 1 },
      null,
    ),
  );
  expect([...made.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  for (const [code, status] of made) expect([code, status]).toEqual([code, ERROR_CODES[code as keyof typeof ERROR_CODES].status]);
});

test("a domain field key is shown under each plane's own name, and a wire name as it is", () => {
  const refusal = errors.badRequest('Monthly limit must be between $1 and $100,000', { field: 'key.monthlySpendLimit' });
  expect(errors.detailsForPlane(refusal, { 'key.monthlySpendLimit': 'monthly_spend_limit_micro' })).toEqual({
    field: 'monthly_spend_limit_micro',
  });
  expect(errors.detailsForPlane(refusal, { 'key.monthlySpendLimit': 'input.monthlySpendLimitMicro' })).toEqual({
    field: 'input.monthlySpendLimitMicro',
  });
  const wire = errors.badRequest('messages[0].role must be one of user, assistant', { field: 'messages[0].role' });
  expect(errors.detailsForPlane(wire, { 'key.monthlySpendLimit': 'x' })).toBe(wire.details);
});

test('every domain field key has a name in a plane that answers it (no key reaches a caller as the domain spells it)', () => {
  const unnamed = errors.FIELD_KEYS.filter(
    (key) => !(key in REST_FIELD_NAMES) && !(key in GRAPHQL_FIELD_NAMES) && !(key in CLI_FIELD_NAMES),
  );
  expect(unnamed).toEqual([]);
});
