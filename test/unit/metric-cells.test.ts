import { Registry } from 'prom-client';
import { FastCounter, FastHistogram } from '../../src/infra/metric-cells';
import { parsePrometheusText, sumOf } from '../support/prometheus';

/** The cells as Prometheus reads them: through a prom-client Registry's text exposition. */

test('counters and histograms expose cumulative buckets, sums, counts and escaped labels', async () => {
  const registry = new Registry();
  const counter = new FastCounter(registry, 'demo_total', 'A counter.', ['route', 'status']);
  const histogram = new FastHistogram(registry, 'demo_seconds', 'A histogram.', ['route'], [0.1, 1]);
  const keys = counter.cell('/v1/keys/{id}', '200');
  keys.inc();
  keys.inc(2);
  counter.cell('say "hi"\\', '500').inc();
  const timing = histogram.cell('/v1/models');
  for (const seconds of [0.05, 0.1, 0.5, 3]) timing.observe(seconds);

  const { samples, types } = parsePrometheusText(await registry.metrics());
  expect(types.get('demo_total')).toBe('counter');
  expect(types.get('demo_seconds')).toBe('histogram');
  expect(sumOf(samples, 'demo_total', { route: '/v1/keys/{id}', status: '200' })).toBe(3);
  expect(sumOf(samples, 'demo_total', { route: 'say "hi"\\' })).toBe(1);
  const bucket = (le: string) => sumOf(samples, 'demo_seconds_bucket', { route: '/v1/models', le });
  expect([bucket('0.1'), bucket('1'), bucket('+Inf')]).toEqual([2, 3, 4]); // le is inclusive: 0.1 falls in the first
  expect(sumOf(samples, 'demo_seconds_count', { route: '/v1/models' })).toBe(4);
  expect(sumOf(samples, 'demo_seconds_sum', { route: '/v1/models' })).toBeCloseTo(3.65, 10);
});

test('a cell needs exactly the declared labels', () => {
  const counter = new FastCounter(new Registry(), 'demo_total', 'A counter.', ['route', 'status']);
  expect(() => counter.cell('/v1/models')).toThrow(/route, status/);
});
