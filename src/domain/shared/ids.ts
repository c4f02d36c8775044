import { monotonicFactory } from 'ulid';

/**
 * Ids are `<prefix>_<ULID>`: readable (`key_…`, `kev_…`), unique across instances, and
 * sortable by creation time, which is what cursor pagination (`after`) relies on.
 */
export type IdPrefix = 'acct' | 'usr' | 'ses' | 'key' | 'kev' | 'plan' | 'hold' | 'led' | 'use' | 'req' | 'vid';

export interface IdGenerator {
  next(prefix: IdPrefix): string;
}

export function ulidIds(): IdGenerator {
  const ulid = monotonicFactory();
  return { next: (prefix) => `${prefix}_${ulid().toLowerCase()}` };
}
