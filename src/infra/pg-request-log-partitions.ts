import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlRows } from '../domain/shared/sql';
import type { MaintainPartitions, PartitionChange } from '../domain/usage/upkeep';

/** The request log's partitions on PostgreSQL: tollgate_usage_partitions (migrations/functions). */
export function pgRequestLogPartitions(orm: MikroORM): MaintainPartitions {
  return async (now, keepMonths) => {
    const rows = await orm.em.fork().transactional((tx) =>
      sqlRows<{ action: PartitionChange['action']; partition_name: string }>(tx, 'select action, partition_name from tollgate_usage_partitions(?, ?)', [now.toISOString(), keepMonths]),
    );
    return rows.map((r) => ({ action: r.action, partition: r.partition_name }));
  };
}
