import { storageErrorAsApiError } from '../shared/errors';
import { retryDeadlocks } from '../shared/sql';
import type { LeaseOp, LeaseOpResult, LeaseStore, SettleOp } from './lease-store';

interface QueuedOp {
  op: LeaseOp;
  /** A settlement may wait for company (settlementDelayMs); anything else is written at once. */
  settlement: boolean;
  queuedAtMs: number;
  resolve(result: LeaseOpResult): void;
  reject(error: unknown): void;
}

/**
 * Most operations one statement carries. A statement holds the row locks of its leases,
 * accounts and key months until it commits, and requests taking a lease on them wait that
 * long; beyond this size a batch costs no less per settlement (docs/billing.md has the figures).
 */
export const MAX_BATCH_OPS = 100;
/** How long a batch waits for a database that went away, serving and shutting down. */
const OUTAGE_PATIENCE_MS = 10 * 60_000;
const OUTAGE_PATIENCE_CLOSING_MS = 10_000;

/**
 * Lease operations of one instance, written in order, one batch at a time (group commit).
 *
 * A batch is due when its oldest settlement has waited settlementDelayMs, at once when it holds
 * anything else (a give-back, a renewal), is full, or the writer is asked to finish; never
 * before the previous batch is committed. The wait is what makes batches: a statement has a
 * fixed cost however few settlements it carries, so writing whatever queued during the previous
 * commit would cost several times what one batch per delay does (docs/billing.md).
 */
export class LeaseOpWriter {
  private queue: QueuedOp[] = [];
  private writing: Promise<void> | null = null;
  /** Queued operations that are not settlements: the next batch is due at once. */
  private urgent = 0;
  private finishing = false;
  /** Ends the wait for the next batch (set while waiting). */
  private wake: (() => void) | null = null;

  /** `settlementDelayMs`: how long settlements alone may wait to share a batch (see BudgetLeasesOptions). */
  constructor(
    private readonly store: LeaseStore,
    private readonly settlementDelayMs: number,
  ) {}

  /** Queues an operation that is written with the next batch, at once (a give-back, a renewal). */
  push(op: LeaseOp): Promise<LeaseOpResult> {
    return this.queueOp(op, false);
  }

  /** Queues a settlement, which may wait up to settlementDelayMs for company. */
  pushSettlement(op: SettleOp): Promise<LeaseOpResult> {
    return this.queueOp(op, true);
  }

  private queueOp(op: LeaseOp, settlement: boolean): Promise<LeaseOpResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ op, settlement, queuedAtMs: performance.now(), resolve, reject });
      if (!settlement) this.urgent++;
      if (!this.writing) this.writing = this.run();
      else if (this.wake && this.dueInMs() <= 0) this.wake();
    });
  }

  /** Resolves when everything queued so far is written (shutdown: written at once). */
  async idle(): Promise<void> {
    this.finishing = true;
    try {
      while (this.writing) {
        this.wake?.();
        await this.writing;
      }
    } finally {
      this.finishing = false;
    }
  }

  private dueInMs(): number {
    if (this.urgent > 0 || this.finishing || this.queue.length >= MAX_BATCH_OPS) return 0;
    return this.queue[0]!.queuedAtMs + this.settlementDelayMs - performance.now();
  }

  private async run(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        await this.nextBatchDue();
        const batch = this.queue.length <= MAX_BATCH_OPS ? this.queue : this.queue.slice(0, MAX_BATCH_OPS);
        this.queue = batch === this.queue ? [] : this.queue.slice(MAX_BATCH_OPS);
        for (const queued of batch) if (!queued.settlement) this.urgent--;
        await this.write(batch);
      }
    } finally {
      this.writing = null;
    }
  }

  /**
   * Even when due at once the batch starts on the next turn of the event loop: the answer whose
   * settlement this is goes out first, and whatever else finishes in this turn joins the batch.
   */
  private nextBatchDue(): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const go = () => {
        this.wake = null;
        clearTimeout(timer);
        setImmediate(resolve);
      };
      const waitMs = this.dueInMs();
      if (waitMs <= 0) return go();
      timer = setTimeout(go, waitMs);
      this.wake = go;
    });
  }

  private async write(batch: QueuedOp[]): Promise<void> {
    const ops = batch.map((queued) => queued.op);
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        // One transaction: a deadlock (with a sweeper, say) rolls all of it back, and it runs again.
        const results = await retryDeadlocks(() => this.store.applyOps(ops));
        results.forEach((result, i) => batch[i]!.resolve(result));
        return;
      } catch (error) {
        // The database is away (restarting, say): these charges were answered already, so the
        // batch waits for it instead of being lost; later batches queue behind it, in order.
        // A replayed settlement changes nothing (its usage record is its claim).
        const patience = this.finishing ? OUTAGE_PATIENCE_CLOSING_MS : OUTAGE_PATIENCE_MS;
        if (storageErrorAsApiError(error)?.status === 503 && performance.now() - started < patience) {
          await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** Math.min(attempt, 5), 2_000)));
          continue;
        }
        for (const queued of batch) queued.reject(error);
        return;
      }
    }
  }
}
