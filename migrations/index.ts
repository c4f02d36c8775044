import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000Initial } from './Migration20261122000000Initial';

/** Applied in this order on start; add each new migration here. */
export const MIGRATIONS: MigrationObject[] = [{ name: 'Migration20261122000000Initial', class: Migration20261122000000Initial }];
