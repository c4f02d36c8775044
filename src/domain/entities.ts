import { Account, Plan, Session, User } from './accounts/entities';
import { Hold, KeyMonthSpend, LedgerEntry, PlanMonthUsage, UsageDaily, UsageRecord } from './billing/entities';
import { ApiKey, KeyEvent } from './keys/entities';
import { Video, VideoIdempotencyKey } from './videos/entities';

/** Every MikroORM entity, for the ORM configuration. */
export const ENTITIES = [
  Account,
  Plan,
  User,
  Session,
  ApiKey,
  KeyEvent,
  Hold,
  LedgerEntry,
  KeyMonthSpend,
  PlanMonthUsage,
  UsageRecord,
  UsageDaily,
  Video,
  VideoIdempotencyKey,
];
