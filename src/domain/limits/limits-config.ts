import { z } from 'zod';
import { DEFAULT_PLANS, type PlanDefinition } from '../accounts/plans';
import { describeSchemaIssue } from '../shared/schema-issues';
import { parseMicroString } from '../shared/money';
import { DEFAULT_TIERS, type Tier } from './tiers';

/** The rate-limit tiers and the plans of a deployment. */
export interface LimitsConfig {
  tiers: readonly Tier[];
  plans: readonly PlanDefinition[];
}

export const DEFAULT_LIMITS: LimitsConfig = { tiers: DEFAULT_TIERS, plans: DEFAULT_PLANS };

/**
 * The limits file (TOLLGATE_LIMITS_FILE). Either section may be left out to keep the defaults.
 * {
 *   "tiers": [
 *     { "tier": 1, "lifetime_top_ups_from_micro": "0", "requests_per_second": 5,
 *       "requests_per_minute": 100, "tokens_per_minute": 200000, "concurrent_requests": 5 }, ...
 *   ],
 *   "plans": [
 *     { "name": "starter", "models": ["sandbox/echo"], "monthly_allowance_micro": "5000000",
 *       "requests_per_minute": 20 }, ...
 *   ]
 * }
 * Money is a decimal string of micro-dollars, as everywhere at Tollgate's edges. Unknown fields
 * are refused, so a typo cannot silently drop a setting.
 */
const PLAN_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SERVICE_ID = /^[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9._-]*$/;

const positive = z
  .number({ error: 'must be a positive integer' })
  .int('must be a positive integer')
  .min(1, 'must be a positive integer')
  .max(1_000_000_000, 'must be at most 1000000000');
// At most 18 digits: what a PostgreSQL bigint column holds.
const micro = z
  .string({ error: 'must be a decimal string of micro-dollars' })
  .refine((value) => value.length <= 18 && parseMicroString(value) !== undefined, 'must be a decimal string of micro-dollars');

const tierSchema = z.strictObject(
  {
    tier: positive,
    lifetime_top_ups_from_micro: micro,
    requests_per_second: positive,
    requests_per_minute: positive,
    tokens_per_minute: positive,
    concurrent_requests: positive,
  },
  { error: 'must be an object' },
);

const planSchema = z.strictObject(
  {
    name: z.string({ error: 'must be a string' }).regex(PLAN_NAME, 'must be a lowercase name (letters, digits, - and _)'),
    models: z
      .array(z.string({ error: 'must be a string' }).regex(SERVICE_ID, 'must be a "<vendor>/<model>" id'), { error: 'must be a list' })
      .min(1, 'must not be empty'),
    monthly_allowance_micro: micro,
    requests_per_minute: positive,
  },
  { error: 'must be an object' },
);

const limitsSchema = z
  .strictObject(
    {
      tiers: z.array(tierSchema, { error: 'must be a list' }).min(1, 'must not be empty').optional(),
      plans: z.array(planSchema, { error: 'must be a list' }).optional(),
    },
    { error: 'must be a JSON object' },
  )
  .superRefine((limits, ctx) => {
    limits.tiers?.forEach((tier, i) => {
      const previous = limits.tiers![i - 1];
      if (i === 0 && tier.lifetime_top_ups_from_micro !== '0') {
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', 0, 'lifetime_top_ups_from_micro'],
          message: 'must be "0": the first tier applies to every account',
        });
      }
      if (previous && tier.tier <= previous.tier)
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', i, 'tier'],
          message: 'must be greater than the previous tier (list tiers in ascending order)',
        });
      if (previous && BigInt(tier.lifetime_top_ups_from_micro) <= BigInt(previous.lifetime_top_ups_from_micro)) {
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', i, 'lifetime_top_ups_from_micro'],
          message: "must be greater than the previous tier's",
        });
      }
    });
    const names = new Set<string>();
    limits.plans?.forEach((plan, i) => {
      if (names.has(plan.name)) ctx.addIssue({ code: 'custom', path: ['plans', i, 'name'], message: `repeats the plan '${plan.name}'` });
      names.add(plan.name);
    });
  });

/** Validates limits source data (parsed JSON); `origin` prefixes error messages. */
export function parseLimits(source: unknown, origin: string): LimitsConfig {
  const parsed = limitsSchema.safeParse(source);
  if (!parsed.success) throw new Error(`${origin}: ${describeSchemaIssue(parsed.error.issues[0], 'the file')}`);
  const { tiers, plans } = parsed.data;
  return {
    tiers:
      tiers?.map((t) => ({
        tier: t.tier,
        fromMicro: BigInt(t.lifetime_top_ups_from_micro),
        requestsPerSecond: t.requests_per_second,
        requestsPerMinute: t.requests_per_minute,
        tokensPerMinute: t.tokens_per_minute,
        concurrentRequests: t.concurrent_requests,
      })) ?? DEFAULT_TIERS,
    plans:
      plans?.map((p) => ({
        name: p.name,
        models: p.models,
        monthlyAllowanceMicro: BigInt(p.monthly_allowance_micro),
        requestsPerMinute: p.requests_per_minute,
      })) ?? DEFAULT_PLANS,
  };
}

/** Plan models the catalog does not know, as "plans[i].models[j] 'id'" (a typo would silently exclude a model). */
export function unknownPlanModels(limits: LimitsConfig, knows: (id: string) => boolean): string[] {
  const unknown: string[] = [];
  limits.plans.forEach((plan, i) => plan.models.forEach((id, j) => knows(id) || unknown.push(`plans[${i}].models[${j}] '${id}'`)));
  return unknown;
}
