import type { FieldNames } from '../domain/shared/errors';

/** The CLI's names of the fields the domain refuses by key: its options. */
export const CLI_FIELD_NAMES: FieldNames = {
  'account.name': '--name',
  'account.tier': '--tier',
  'account.email': '--email',
  'account.password': '--password',
  'account.plan': '--plan',
  'key.name': '--name',
  'key.kind': '--kind',
  'key.monthlySpendLimit': '--monthly-limit-micro',
  'key.expiresAt': '--expires-at',
  'funds.amount': '--amount-micro or --amount-usd',
  'usage.keyId': '--key',
  'usage.from': '--from',
  'usage.to': '--to',
  'page.after': '--after',
};
