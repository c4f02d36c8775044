import type { MikroORM } from '@mikro-orm/postgresql';
import type { UsageDeploymentWriter } from '../domain/images/ports';
import { sqlRows } from './sql';

/**
 * Names the deployment on a usage record after its hold settled: an image request's hold is
 * settled by the billing service, whose usage record does not carry the deployment (text's
 * budget leases write it with the record). One indexed update (`hold_id` is unique).
 */
export class PgUsageDeployment implements UsageDeploymentWriter {
  constructor(private readonly orm: MikroORM) {}

  async name(holdId: string, deployment: string): Promise<void> {
    await sqlRows(this.orm.em.fork(), 'update usage_records set deployment = ? where hold_id = ? and deployment is null returning id', [
      deployment,
      holdId,
    ]);
  }
}
