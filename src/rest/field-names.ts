import type { FieldNames } from '../domain/shared/errors';

/** The REST names of the fields the domain refuses by key: what a REST caller sent. */
export const REST_FIELD_NAMES: FieldNames = {
  'account.email': 'email',
  'account.password': 'password',
  'key.name': 'name',
  'key.kind': 'kind',
  'key.monthlySpendLimit': 'monthly_spend_limit_micro',
  'key.expiresAt': 'expires_at',
  'page.after': 'after',
  'page.limit': 'limit',
  'usage.keyId': 'key_id',
  'video.prompt': 'prompt',
  'video.seconds': 'seconds',
  'video.size': 'size',
  'video.resolution': 'resolution',
  'video.ratio': 'ratio',
  'video.idempotencyKey': 'Idempotency-Key',
};
