import type { ServerResponse } from 'node:http';
import { Router, type RequestHandler } from 'express';
import type { AuthService } from '../domain/accounts/auth';
import type { AccountService } from '../domain/accounts/service';
import { USAGE_STATUSES, type UsageRecordView } from '../domain/billing/queries';
import type { BillingService } from '../domain/billing/service';
import type { KeyService } from '../domain/keys/service';
import { unixSeconds } from '../domain/shared/clock';
import { badRequest } from '../domain/shared/errors';
import { formatScaled } from '../domain/shared/money';
import type { UsageService } from '../domain/usage/service';
import { keyPrincipal, requireApiKey, requireSession, sessionPrincipal } from './auth';

/** The request log's CSV columns, in order. */
export const REQUEST_LOG_CSV_COLUMNS = [
  'created_at',
  'id',
  'request_id',
  'key_id',
  'key_name',
  'model',
  'status',
  'input_tokens',
  'cached_input_tokens',
  'cache_write_5m_input_tokens',
  'cache_write_1h_input_tokens',
  'output_tokens',
  'reasoning_tokens',
  'images',
  'video_seconds',
  'cost_micro',
  'cost_usd',
  'overage_micro',
  'latency_ms',
] as const;

/** RFC 4180 quoting; a text cell starting like a formula is prefixed with ' so a spreadsheet shows it as text. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const csvRow = (u: UsageRecordView): string =>
  [
    u.createdAt.toISOString(),
    u.id,
    u.requestId,
    u.keyId,
    u.keyName,
    u.model,
    u.status,
    u.inputTokens,
    u.cachedInputTokens,
    u.cacheWrite5mInputTokens,
    u.cacheWrite1hInputTokens,
    u.outputTokens,
    u.reasoningTokens,
    u.images,
    u.videoSeconds,
    u.costMicro.toString(),
    formatScaled(u.costMicro, 6),
    u.overageMicro.toString(),
    u.latencyMs,
  ]
    .map(csvCell)
    .join(',') + '\r\n';

function queryString(value: unknown, field: string): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || value === '') throw badRequest(`${field} must be a single non-empty value`, { field });
  return value;
}

/** Unix seconds (REST timestamps are Unix seconds). */
function querySeconds(value: unknown, field: string): Date | null {
  const raw = queryString(value, field);
  if (raw === null) return null;
  if (!/^\d{1,12}$/.test(raw)) throw badRequest(`${field} must be a Unix timestamp in seconds`, { field });
  return new Date(Number(raw) * 1000);
}

/** Writes and waits when the socket's buffer is full: memory stays bounded whatever the size of the export. */
async function writeBounded(res: ServerResponse, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
  return !res.destroyed;
}

/**
 * The request log as CSV for signed-in sessions, and the API key's own spend for tools that
 * cannot sign in (docs/api.md, Usage).
 */
export function usageRouter(deps: {
  auth: AuthService;
  usage: UsageService;
  billing: BillingService;
  accounts: AccountService;
  keys: KeyService;
  admitRequest: RequestHandler;
}): Router {
  const router = Router();

  router.get('/usage/requests.csv', requireSession(deps.auth), async (req, res) => {
    const status = queryString(req.query.status, 'status');
    if (status !== null && !(USAGE_STATUSES as readonly string[]).includes(status))
      throw badRequest(`status must be one of ${USAGE_STATUSES.join(', ')}`, { field: 'status' });
    const from = querySeconds(req.query.from, 'from');
    const to = querySeconds(req.query.to, 'to');
    if (from && to && from > to) throw badRequest('from must not be after to', { field: 'from' });
    const filter = { keyId: queryString(req.query.key_id, 'key_id'), model: queryString(req.query.model, 'model'), status, from, to };
    const rows = deps.usage.requestLogRows(sessionPrincipal(res).accountId, filter);
    // The first page is read before the answer starts, so a refused filter is still an error envelope.
    let next = await rows.next();
    res.status(200);
    res.setHeader('content-type', 'text/csv; charset=utf-8');
    res.setHeader('content-disposition', 'attachment; filename="requests.csv"');
    res.setHeader('cache-control', 'no-store');
    if (!(await writeBounded(res, REQUEST_LOG_CSV_COLUMNS.join(',') + '\r\n'))) return void (await rows.return(undefined));
    while (!next.done) {
      if (!(await writeBounded(res, csvRow(next.value)))) return void (await rows.return(undefined));
      next = await rows.next();
    }
    res.end();
  });

  router.get('/key', requireApiKey(deps.auth, { allowXApiKey: true }), deps.admitRequest, async (_req, res) => {
    const principal = keyPrincipal(res);
    const [key, spend, account] = await Promise.all([
      deps.keys.getKey(principal.accountId, principal.keyId),
      deps.billing.getKeyMonthSpend(principal.accountId, principal.keyId),
      deps.accounts.getAccount(principal.accountId),
    ]);
    res.json({
      object: 'key',
      id: key.id,
      name: key.name,
      kind: key.kind,
      prefix: key.prefix,
      expires_at: key.expiresAt ? unixSeconds(key.expiresAt) : null,
      month: spend.month,
      monthly_spend_limit_micro: spend.limitMicro?.toString() ?? null,
      month_settled_micro: spend.settledMicro.toString(),
      month_reserved_micro: spend.reservedMicro.toString(),
      month_spent_micro: spend.spentMicro.toString(),
      month_remaining_micro: spend.remainingMicro?.toString() ?? null,
      month_resets_at: unixSeconds(spend.resetsAt),
      account: {
        balance_micro: account.balanceMicro.toString(),
        reserved_micro: account.reservedMicro.toString(),
        available_micro: account.availableMicro.toString(),
      },
    });
  });

  return router;
}
