import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000Initial } from './Migration20261122000000Initial';
import { Migration20261123000000HoldFunctions } from './Migration20261123000000HoldFunctions';
import { Migration20261124000000BudgetLeases } from './Migration20261124000000BudgetLeases';
import { Migration20261125000000SetBasedSettlement } from './Migration20261125000000SetBasedSettlement';
import { Migration20261126000000ActiveHoldsIndex } from './Migration20261126000000ActiveHoldsIndex';
import { Migration20261127000000UsageRecordClaim } from './Migration20261127000000UsageRecordClaim';
import { Migration20261128000000AppendOnlyAccountRefs } from './Migration20261128000000AppendOnlyAccountRefs';
import { Migration20261129120000Videos } from './Migration20261129120000Videos';
import { Migration20261201000000ChargesWithinHolds } from './Migration20261201000000ChargesWithinHolds';
import { Migration20261204000000VideoDeletion } from './Migration20261204000000VideoDeletion';
import { Migration20261211000000RequestLog } from './Migration20261211000000RequestLog';
import { Migration20261211500000UsageDeployment } from './Migration20261211500000UsageDeployment';
import { Migration20261212300000SettlementArrays } from './Migration20261212300000SettlementArrays';
import { Migration20261213000000VideoDeployment } from './Migration20261213000000VideoDeployment';

/** Applied in this order on start; add each new migration here. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122000000Initial', class: Migration20261122000000Initial },
  { name: 'Migration20261123000000HoldFunctions', class: Migration20261123000000HoldFunctions },
  { name: 'Migration20261124000000BudgetLeases', class: Migration20261124000000BudgetLeases },
  { name: 'Migration20261125000000SetBasedSettlement', class: Migration20261125000000SetBasedSettlement },
  { name: 'Migration20261126000000ActiveHoldsIndex', class: Migration20261126000000ActiveHoldsIndex },
  { name: 'Migration20261127000000UsageRecordClaim', class: Migration20261127000000UsageRecordClaim },
  { name: 'Migration20261128000000AppendOnlyAccountRefs', class: Migration20261128000000AppendOnlyAccountRefs },
  { name: 'Migration20261129120000Videos', class: Migration20261129120000Videos },
  { name: 'Migration20261201000000ChargesWithinHolds', class: Migration20261201000000ChargesWithinHolds },
  { name: 'Migration20261204000000VideoDeletion', class: Migration20261204000000VideoDeletion },
  { name: 'Migration20261211000000RequestLog', class: Migration20261211000000RequestLog },
  { name: 'Migration20261211500000UsageDeployment', class: Migration20261211500000UsageDeployment },
  { name: 'Migration20261212300000SettlementArrays', class: Migration20261212300000SettlementArrays },
  { name: 'Migration20261213000000VideoDeployment', class: Migration20261213000000VideoDeployment },
];
