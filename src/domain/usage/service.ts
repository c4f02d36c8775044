import { readUsagePage, type BillingReads, type UsageFilter, type UsageRecordPage, type UsageRecordView } from '../billing/queries';
import { listLedger, type LedgerPage, type LedgerReads } from '../billing/ledger';
import type { LedgerKind } from '../billing/entities';
import type { Clock } from '../shared/clock';
import { spendPeriod, spendReport, type SpendGrouping, type SpendReads, type SpendReport } from './spend';

/**
 * What an account used and paid, read by the dashboard, the CLI and any other client alike:
 * spend over a period (from the daily aggregates), the request log (keyset pages, or every
 * matching row streamed in pages for an export) and the ledger.
 */
export class UsageService {
  constructor(
    private readonly clock: Clock,
    private readonly reads: BillingReads,
    private readonly usageReads: LedgerReads & SpendReads,
  ) {}

  /** from/to: UTC days YYYY-MM-DD, inclusive, null for the 30 days ending today. */
  spend(
    accountId: string,
    query: { from: string | null; to: string | null; groupBy: SpendGrouping; keyId: string | null; model: string | null },
  ): Promise<SpendReport> {
    const period = spendPeriod(query.from, query.to, this.clock.now());
    return spendReport(this.usageReads, accountId, { ...period, groupBy: query.groupBy, keyId: query.keyId, model: query.model });
  }

  requestLog(accountId: string, filter: UsageFilter): Promise<UsageRecordPage> {
    return readUsagePage(this.reads, accountId, filter);
  }

  /** Every record matching the filter, newest first, read one keyset page at a time (constant memory). */
  async *requestLogRows(accountId: string, filter: Omit<UsageFilter, 'limit' | 'after'>, pageSize = 1000): AsyncGenerator<UsageRecordView> {
    let after: string | null = null;
    for (;;) {
      const page = await readUsagePage(this.reads, accountId, { ...filter, limit: pageSize, after });
      yield* page.data;
      if (!page.hasMore) return;
      after = page.lastId;
    }
  }

  requestLogEntry(accountId: string, by: { id: string } | { requestId: string }): Promise<UsageRecordView | null> {
    return this.reads.findUsageRecord(accountId, by);
  }

  ledger(accountId: string, page: { limit: number; after: string | null; kind: LedgerKind | null }): Promise<LedgerPage> {
    return listLedger(this.usageReads, accountId, page);
  }
}
