import { Migration } from '@mikro-orm/migrations';
import { functionDefinition } from './functions';
import { JSON_APPLY_LEASE_OPS } from './Migration20261212300000SettlementArrays';

/**
 * A usage record names the deployment that served a routed model (docs/routing.md): the new
 * nullable `deployment` column (null for a model without deployments, and for requests no
 * deployment served), written by tollgate_apply_lease_ops from the settlement's `deployment`.
 */
export class Migration20261211500000UsageDeployment extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "usage_records" add column "deployment" text null;');
    this.addSql(functionDefinition('tollgate_apply_lease_ops'));
  }

  override async down(): Promise<void> {
    // The previous definition: this one without the deployment.
    const previous = JSON_APPLY_LEASE_OPS.replace(',\n        deployment text)', ')')
      .replace(', created_at, deployment)', ', created_at)')
      .replace(', o.now, o.deployment', ', o.now');
    this.addSql(previous);
    this.addSql('alter table "usage_records" drop column "deployment";');
  }
}
