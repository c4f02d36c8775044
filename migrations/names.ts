/**
 * The committed migrations in the order they apply, by name alone: a running instance checks
 * that its database has them all (src/infra/database.ts) without loading the migrator, which
 * every migration class imports. Add each new migration here and in index.ts (schema.test.ts
 * checks that the two lists agree).
 */
export const MIGRATION_NAMES: readonly string[] = [
  'Migration20261122000000Initial',
  'Migration20261123000000HoldFunctions',
  'Migration20261124000000BudgetLeases',
  'Migration20261125000000SetBasedSettlement',
  'Migration20261126000000ActiveHoldsIndex',
  'Migration20261127000000UsageRecordClaim',
  'Migration20261128000000AppendOnlyAccountRefs',
  'Migration20261129120000Videos',
  'Migration20261201000000ChargesWithinHolds',
  'Migration20261204000000VideoDeletion',
  'Migration20261211000000RequestLog',
  'Migration20261211500000UsageDeployment',
  'Migration20261212300000SettlementArrays',
  'Migration20261213000000VideoDeployment',
];
