import { Migration } from '@mikro-orm/migrations';

/**
 * A video job is bound to the deployment that accepted it (docs/routing.md, Videos): its polls
 * and download go there, also after a restart. Nullable: a row from before routing, and a job of
 * a model without deployments, belong to the model's first deployment (its own vendor).
 */
export class Migration20261213000000VideoDeployment extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "videos" add column "deployment" text null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "videos" drop column "deployment";');
  }
}
