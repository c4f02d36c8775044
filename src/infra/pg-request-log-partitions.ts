import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlRows } from './sql';
import type { MaintainPartitions, PartitionChange } from '../domain/usage/upkeep';

/** The request log's partitions on PostgreSQL: tollgate_usage_partitions (migrations/functions). */
export function pgRequestLogPartitions(orm: MikroORM): MaintainPartitions {
  return async (now, keepMonths) => {
    const rows = await orm.em.fork().transactional(async (tx) => {
      // Attaching or dropping a partition waits for a lock on the table every settlement writes
      // to, and settlements would queue behind that wait: give up after 2 s instead (logged;
      // the next run, hours later, tries again).
      await tx.execute("set local lock_timeout = '2s'");
      return sqlRows<{ action: PartitionChange['action']; partition_name: string }>(
        tx,
        'select action, partition_name from tollgate_usage_partitions(?, ?)',
        [now.toISOString(), keepMonths],
      );
    });
    return rows.map((r) => ({ action: r.action, partition: r.partition_name }));
  };
}
