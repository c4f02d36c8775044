/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4) for tests: every
 * line must be a comment (# HELP / # TYPE), blank, or a sample `name{label="value",…} number`.
 * A malformed line throws, so a broken exposition fails the test that reads it.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`malformed labels in: ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  // Any case, as Prometheus reads it (prom-client writes `Nan` for an empty event-loop histogram).
  if (text.toLowerCase() === 'nan') return NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`malformed value in: ${line}`);
  return value;
}

export function parsePrometheusText(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      else if (!/^# HELP \S+ /.test(line)) throw new Error(`malformed comment: ${line}`);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`malformed sample: ${line}`);
    samples.push({ name: match[1]!, labels: match[2] ? parseLabels(match[2], line) : {}, value: parseValue(match[3]!, line) });
  }
  return { samples, types };
}

/** The sum of the samples of `name` whose labels include `labels`. */
export function sumOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
