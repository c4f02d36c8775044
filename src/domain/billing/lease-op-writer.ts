import { storageErrorAsApiError } from '../shared/errors';
import type { LeaseOp, LeaseOpResult, LeaseStore, SettleOp } from './lease-store';

/**
 * Who is told how a queued operation ended. A settlement's is one small object of its own
 * (BudgetLeases), not a promise: settlements wait in the backlog up to a batch window and a
 * commit, and a promise with its resolvers and reactions each would outlive young-generation
 * collections with them (docs/performance.md).
 */
export interface OpListener {
  committed(result: LeaseOpResult): void;
  failed(error: unknown): void;
}

interface QueuedOp {
  op: LeaseOp;
  /** A settlement may wait for company (settlementDelayMs); anything else is written at once. */
  settlement: boolean;
  queuedAtMs: number;
  listener: OpListener;
}

/**
 * A batch this full is due at once, without waiting for more company. Above what a busy lane
 * gathers in one batch window, so that the window sets a busy lane's batches: PostgreSQL's cost
 * per settlement still falls past 100 (docs/billing.md, Settlement batches).
 */
export const MAX_BATCH_OPS = 250;
/**
 * Most operations one statement carries, taken only when a lane has a backlog: a statement's
 * fixed cost is then shared by more settlements, so the writer catches up instead of falling
 * further behind; its row locks are held longer, but only while it is behind (docs/billing.md).
 */
export const MAX_BACKLOG_BATCH_OPS = 1_000;
/** How long a batch waits for a database that went away, serving and shutting down. */
const OUTAGE_PATIENCE_MS = 10 * 60_000;
const OUTAGE_PATIENCE_CLOSING_MS = 10_000;

export interface LeaseOpWriterOptions {
  /** How long settlements alone may wait to share a batch (see BudgetLeasesOptions). */
  settlementDelayMs: number;
  /** Operations not yet committed beyond which admission waits and answers wait for their charge. */
  backlogLimit: number;
  /** Batches written at once, each on its own accounts (so they never wait on each other's rows). */
  lanes: number;
  /** Most operations of one statement (default MAX_BACKLOG_BATCH_OPS; benches compare others). */
  maxBatchOps?: number;
}

/** Operations accepted and not yet committed, and how long the oldest of them has waited. */
export interface SettlementBacklog {
  depth: number;
  oldestAgeMs: number;
  limit: number;
  /** Admissions that waited for room, and those refused after waiting (since start). */
  waited: number;
  refused: number;
}

/** One account's operations always go to the same lane: written in order, one batch at a time. */
class Lane {
  queue: QueuedOp[] = [];
  writing: Promise<void> | null = null;
  /** When the oldest operation of the batch being written was queued (0: none being written). */
  writingSinceMs = 0;
  /** Queued operations that are not settlements: the next batch is due at once. */
  urgent = 0;
  /** Ends the wait for the next batch (set while waiting). */
  wake: (() => void) | null = null;
}

interface RoomWaiter {
  admit(admitted: boolean): void;
  timer: NodeJS.Timeout;
}

/**
 * Lease operations of one instance, written in batches (group commit), on `lanes` connections.
 *
 * A lane's batch is due when its oldest settlement has waited settlementDelayMs, at once when it
 * holds anything else (a give-back, a renewal), is full, the backlog is at its limit, or the
 * writer is asked to finish; never before the lane's previous batch is committed. The wait is
 * what makes batches: a statement has a fixed cost however few settlements it carries, so
 * writing whatever queued during the previous commit would cost several times what one batch
 * per delay does (docs/billing.md). Lanes split accounts, so concurrent batches lock disjoint
 * rows (leases, accounts, key months and plan months all belong to one account).
 *
 * The backlog is bounded: at `backlogLimit` operations not yet committed, hasRoom() is false
 * (admission waits: waitForRoom) and mayTrail() is false (an answer waits for its charge), so
 * at most backlogLimit answered charges are ever uncommitted, which is what a crash can lose.
 */
export class LeaseOpWriter {
  private readonly lanes: Lane[];
  private readonly maxBatchOps: number;
  private depth = 0;
  private finishing = false;
  private readonly waiters: RoomWaiter[] = [];
  private waited = 0;
  private refused = 0;

  constructor(
    private readonly store: LeaseStore,
    private readonly options: LeaseOpWriterOptions,
  ) {
    this.lanes = Array.from({ length: Math.max(1, options.lanes) }, () => new Lane());
    this.maxBatchOps = options.maxBatchOps ?? MAX_BACKLOG_BATCH_OPS;
  }

  /** The lane of an account's operations (a stable hash of its id). */
  laneOf(accountId: string): number {
    let hash = 0;
    for (let i = 0; i < accountId.length; i++) hash = (hash * 31 + accountId.charCodeAt(i)) | 0;
    return (hash >>> 0) % this.lanes.length;
  }

  /** Queues an operation that is written with the lane's next batch, at once (a give-back, a renewal). */
  push(op: LeaseOp, lane: number): Promise<LeaseOpResult> {
    return new Promise((resolve, reject) => this.queueOp(op, false, lane, { committed: resolve, failed: reject }));
  }

  /** Queues a settlement, which may wait up to settlementDelayMs for company; `listener` hears how it ended. */
  pushSettlement(op: SettleOp, lane: number, listener: OpListener): void {
    this.queueOp(op, true, lane, listener);
  }

  /** Whether a new request may be admitted now: the backlog is under its limit and nobody waits before it. */
  hasRoom(): boolean {
    return this.depth < this.options.backlogLimit && this.waiters.length === 0;
  }

  /** Whether a settlement queued now may be left uncommitted when its answer ends. */
  mayTrail(): boolean {
    return this.depth < this.options.backlogLimit;
  }

  /** Resolves true once there is room (first come, first admitted), false after `timeoutMs`. */
  waitForRoom(timeoutMs: number): Promise<boolean> {
    if (this.hasRoom()) return Promise.resolve(true);
    this.waited++;
    return new Promise((resolve) => {
      const waiter: RoomWaiter = {
        admit: resolve,
        timer: setTimeout(() => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          this.refused++;
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.push(waiter);
      // Everything queued is due at once while admission waits.
      for (const lane of this.lanes) lane.wake?.();
    });
  }

  backlog(): SettlementBacklog {
    const now = performance.now();
    let oldest = now;
    for (const lane of this.lanes) {
      const since = lane.writingSinceMs || lane.queue[0]?.queuedAtMs;
      if (since !== undefined && since < oldest) oldest = since;
    }
    return { depth: this.depth, oldestAgeMs: now - oldest, limit: this.options.backlogLimit, waited: this.waited, refused: this.refused };
  }

  private queueOp(op: LeaseOp, settlement: boolean, index: number, listener: OpListener): void {
    const lane = this.lanes[index]!;
    lane.queue.push({ op, settlement, queuedAtMs: performance.now(), listener });
    this.depth++;
    if (!settlement) lane.urgent++;
    if (!lane.writing) lane.writing = this.run(lane);
    else if (lane.wake && this.dueInMs(lane) <= 0) lane.wake();
  }

  /** Resolves when everything queued so far is written (shutdown: written at once). */
  async idle(): Promise<void> {
    this.finishing = true;
    try {
      for (;;) {
        const writing = this.lanes.filter((lane) => lane.writing !== null);
        if (writing.length === 0) return;
        for (const lane of writing) lane.wake?.();
        await Promise.all(writing.map((lane) => lane.writing));
      }
    } finally {
      this.finishing = false;
    }
  }

  private dueInMs(lane: Lane): number {
    if (
      lane.urgent > 0 ||
      this.finishing ||
      lane.queue.length >= MAX_BATCH_OPS ||
      this.depth >= this.options.backlogLimit ||
      this.waiters.length > 0
    )
      return 0;
    return lane.queue[0]!.queuedAtMs + this.options.settlementDelayMs - performance.now();
  }

  private async run(lane: Lane): Promise<void> {
    try {
      while (lane.queue.length > 0) {
        await this.nextBatchDue(lane);
        const batch = lane.queue.length <= this.maxBatchOps ? lane.queue : lane.queue.slice(0, this.maxBatchOps);
        lane.queue = batch === lane.queue ? [] : lane.queue.slice(this.maxBatchOps);
        for (const queued of batch) if (!queued.settlement) lane.urgent--;
        lane.writingSinceMs = batch[0]!.queuedAtMs;
        try {
          await this.write(batch);
        } finally {
          lane.writingSinceMs = 0;
          this.depth -= batch.length;
          this.admitWaiters();
        }
      }
    } finally {
      lane.writing = null;
    }
  }

  /**
   * Lets every waiting admission in, in order, once the backlog is under its limit. Counting each
   * as the one operation it will add later could leave a waiter behind when an admitted request
   * then adds none (a release records nothing); letting all in overshoots by at most the
   * requests that were waiting, and a settlement queued over the limit makes its answer wait.
   */
  private admitWaiters(): void {
    if (this.depth >= this.options.backlogLimit) return;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.admit(true);
    }
  }

  /**
   * Even when due at once the batch starts on the next turn of the event loop: the answer whose
   * settlement this is goes out first, and whatever else finishes in this turn joins the batch.
   */
  private nextBatchDue(lane: Lane): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const go = () => {
        lane.wake = null;
        clearTimeout(timer);
        setImmediate(resolve);
      };
      const waitMs = this.dueInMs(lane);
      if (waitMs <= 0) return go();
      timer = setTimeout(go, waitMs);
      lane.wake = go;
    });
  }

  private async write(batch: QueuedOp[]): Promise<void> {
    const ops = batch.map((queued) => queued.op);
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        // One transaction; the store runs it again itself when it is a deadlock victim.
        const results = await this.store.applyOps(ops);
        results.forEach((result, i) => batch[i]!.listener.committed(result));
        return;
      } catch (error) {
        // The database is away (restarting, say): these charges were answered already, so the
        // batch waits for it instead of being lost; later batches of the lane queue behind it,
        // in order, up to the backlog's limit. A replayed settlement changes nothing (its usage
        // record is its claim).
        const patience = this.finishing ? OUTAGE_PATIENCE_CLOSING_MS : OUTAGE_PATIENCE_MS;
        if (storageErrorAsApiError(error)?.status === 503 && performance.now() - started < patience) {
          await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** Math.min(attempt, 5), 2_000)));
          continue;
        }
        for (const queued of batch) queued.listener.failed(error);
        return;
      }
    }
  }
}
