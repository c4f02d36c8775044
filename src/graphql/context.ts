import type { DeploymentListing } from '../domain/routing/listing';
import type { Catalog } from '../domain/catalog/types';
import type { AuthService } from '../domain/accounts/auth';
import { bearerCredential, type OperatorPrincipal, type SessionPrincipal } from '../domain/shared/principal';
import type { AccountService } from '../domain/accounts/service';
import type { BillingService } from '../domain/billing/service';
import type { KeyService } from '../domain/keys/service';
import type { KeyKind } from '../domain/shared/principal';
import { parseKeyName, parseSpendLimit } from '../domain/keys/rules';
import { ApiError, badRequest, invalidToken, sessionRequired } from '../domain/shared/errors';
import type { EventBus } from '../domain/shared/events';
import type { VideoService } from '../domain/videos/service';
import type { UsageService } from '../domain/usage/service';
import type { SessionFeeds } from './session-feeds';

export interface GraphqlServices {
  auth: AuthService;
  accounts: AccountService;
  keys: KeyService;
  billing: BillingService;
  bus: EventBus;
  videos: VideoService;
  usage: UsageService;
  /** The model catalog and the vendors configured here: what the account can call (graphql/models.ts). */
  catalog: Catalog;
  configuredVendors: ReadonlySet<string>;
  /** Every deployment of the routed models with its health (domain/routing/listing.ts). */
  deployments(): DeploymentListing[];
}

/** Per operation: who is calling (or why the credential was refused) and the domain services. */
export interface GraphqlContext {
  services: GraphqlServices;
  principal: SessionPrincipal | OperatorPrincipal | null;
  authError: ApiError | null;
  /** Ends subscriptions with the session that opened them (the server always gives it). */
  feeds: SessionFeeds | null;
  /** The caller's network address (sign-in throttling). */
  clientAddress: string | undefined;
}

/** Reads `Authorization: Bearer …` (HTTP header or graphql-ws `connectionParams.authorization`). */
export async function buildContext(
  services: GraphqlServices,
  authorization: unknown,
  connection: { feeds?: SessionFeeds; clientAddress?: string } = {},
): Promise<GraphqlContext> {
  const base = { services, feeds: connection.feeds ?? null, clientAddress: connection.clientAddress };
  if (typeof authorization !== 'string' || authorization === '') return { ...base, principal: null, authError: null };
  const token = bearerCredential(authorization);
  if (!token) return { ...base, principal: null, authError: invalidToken('Send the credential as Bearer <token>.') };
  try {
    return { ...base, principal: await services.auth.authenticateSessionOrOperator(token), authError: null };
  } catch (error) {
    if (error instanceof ApiError) return { ...base, principal: null, authError: error };
    throw error;
  }
}

/** A subscription's events until the session that opened it ends (SessionFeeds). */
export function sessionFeed<T>(ctx: GraphqlContext, session: SessionPrincipal, source: AsyncIterableIterator<T>): AsyncIterableIterator<T> {
  if (!ctx.feeds) throw new Error('GraphQL subscriptions need the session feeds in their context');
  return ctx.feeds.feed(session, source);
}

/** Session operations: an API key gets `session_required`, no or a bad credential `invalid_token`. */
export function requireSession(ctx: GraphqlContext): SessionPrincipal {
  if (ctx.principal?.type === 'session') return ctx.principal;
  if (ctx.authError) throw ctx.authError;
  if (ctx.principal?.type === 'operator') throw sessionRequired();
  throw invalidToken('This operation needs a signed-in session: Authorization: Bearer <session token>.');
}

/** Operator operations: only `TOLLGATE_ADMIN_TOKEN` (disabled when it is unset). */
export function requireOperator(ctx: GraphqlContext): OperatorPrincipal {
  if (ctx.principal?.type === 'operator') return ctx.principal;
  if (ctx.authError) throw ctx.authError;
  throw invalidToken('This operation needs the operator token (TOLLGATE_ADMIN_TOKEN).');
}

/** An optional ISO-8601 timestamp argument (GraphQL times are ISO strings), or 400 naming the field. */
export function parseIsoTimestamp(value: string | null | undefined, field: string): Date | null {
  if (value === undefined || value === null) return null;
  const at = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(at.getTime()))
    throw badRequest(`${field} must be an ISO-8601 timestamp`, { field });
  return at;
}

/** The fields of a key to create, as both key-creating mutations take them, checked with their GraphQL names. */
export function parseKeyCreation(input: {
  name: string;
  kind?: KeyKind | null;
  monthlySpendLimitMicro?: string | null;
  expiresAt?: string | null;
}) {
  return {
    name: parseKeyName(input.name),
    kind: input.kind ?? 'prepaid',
    monthlySpendLimitMicro: input.monthlySpendLimitMicro == null ? null : parseSpendLimit(input.monthlySpendLimitMicro),
    expiresAt: parseIsoTimestamp(input.expiresAt, 'input.expiresAt'),
  };
}
