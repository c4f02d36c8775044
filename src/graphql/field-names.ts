import type { FieldNames } from '../domain/shared/errors';

/** The GraphQL names of the fields the domain refuses by key: the argument or input field as written. */
export const GRAPHQL_FIELD_NAMES: FieldNames = {
  'account.name': 'input.name',
  'account.tier': 'input.tier',
  'account.email': 'input.email',
  'account.password': 'input.password',
  'account.plan': 'input.plan',
  'key.name': 'input.name',
  'key.kind': 'input.kind',
  'key.monthlySpendLimit': 'input.monthlySpendLimitMicro',
  'key.expiresAt': 'input.expiresAt',
  'page.after': 'after',
  'page.limit': 'first',
  'usage.keyId': 'keyId',
  'usage.month': 'month',
  'usage.range': 'from',
  'usage.from': 'from',
  'usage.to': 'to',
  'funds.amount': 'input.amountMicro',
  'autoTopUp.threshold': 'input.thresholdMicro',
  'autoTopUp.amount': 'input.amountMicro',
};
