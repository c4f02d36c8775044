import type { Registry } from 'prom-client';

/**
 * Counters and histograms for the request path, registered in a prom-client Registry and
 * exposed by it like its own. Each label set resolves once to a cell (a plain object holding
 * numbers); counting then is an addition, with no allocation, no label hashing and no label
 * validation, which prom-client's children do on every call (their cost is in
 * docs/performance.md). Values are only turned into samples when scraped.
 */

export interface CounterCell {
  inc(value?: number): void;
}

export interface HistogramCell {
  observe(value: number): void;
}

type Labels = Record<string, string>;

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** What a prom-client Registry asks of a metric it exposes. */
interface ExposedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; values: MetricValue[]; aggregator: 'sum' }>;
}

function labelsOf(names: readonly string[], values: readonly string[]): Labels {
  if (values.length !== names.length) throw new Error(`expected labels ${names.join(', ')}, got ${values.length} values`);
  const labels: Labels = {};
  names.forEach((name, i) => (labels[name] = values[i]!));
  return labels;
}

class CounterValue implements CounterCell {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(value = 1): void {
    this.value += value;
  }
}

export class FastCounter implements ExposedMetric {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  private readonly cells: CounterValue[] = [];

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
  ) {
    registry.registerMetric(this as never);
  }

  /** A new cell for these label values: resolve once and keep it (the caller caches). */
  cell(...values: string[]): CounterCell {
    const cell = new CounterValue(labelsOf(this.labelNames, values));
    this.cells.push(cell);
    return cell;
  }

  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.cells.map((c) => ({ labels: c.labels, value: c.value })),
    };
  }
}

class HistogramValue implements HistogramCell {
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class FastHistogram implements ExposedMetric {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly cells: HistogramValue[] = [];

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    registry.registerMetric(this as never);
  }

  cell(...values: string[]): HistogramCell {
    const cell = new HistogramValue(labelsOf(this.labelNames, values), this.bounds);
    this.cells.push(cell);
    return cell;
  }

  async get() {
    const values: MetricValue[] = [];
    for (const cell of this.cells) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += cell.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...cell.labels, le: String(bound) }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...cell.labels, le: '+Inf' }, value: cell.count });
      values.push({ metricName: `${this.name}_sum`, labels: cell.labels, value: cell.sum });
      values.push({ metricName: `${this.name}_count`, labels: cell.labels, value: cell.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
