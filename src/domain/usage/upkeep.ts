import type { Clock } from '../shared/clock';

/** A change to the request log's monthly partitions. */
export interface PartitionChange {
  action: 'created' | 'dropped';
  partition: string;
}

/** Port: makes the partitions rows will need and drops months past retention (null keeps all). */
export type MaintainPartitions = (now: Date, keepMonths: number | null) => Promise<PartitionChange[]>;

export const UPKEEP_INTERVAL_MS = 6 * 3600_000;

/**
 * Keeps the request log's storage ahead of its rows and within its retention: once at start,
 * then every few hours, on every instance (the database function lets one run at a time).
 * The timer is unref'd and runs never overlap.
 */
export class RequestLogUpkeep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly maintain: MaintainPartitions,
    private readonly clock: Clock,
    private readonly options: {
      retentionMonths: number;
      intervalMs?: number;
      onChange?: (change: PartitionChange) => void;
      onError?: (error: unknown) => void;
    },
  ) {}

  /** Retention in months, or null when every month is kept (setting 0). */
  get keepMonths(): number | null {
    return this.options.retentionMonths === 0 ? null : this.options.retentionMonths;
  }

  async start(): Promise<void> {
    await this.runOnce();
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.options.intervalMs ?? UPKEEP_INTERVAL_MS);
    this.timer.unref();
  }

  /** One pass now (joined when one is running); never rejects. */
  runOnce(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.maintain(this.clock.now(), this.keepMonths)
      .then((changes) => changes.forEach((c) => this.options.onChange?.(c)))
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
