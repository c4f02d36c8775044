import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';

test('video job defaults: files under the data directory, an hour of deadline, 2 s polls growing to 15 s', () => {
  const config = loadConfig({ TOLLGATE_DATA_DIR: '/srv/tollgate' });
  expect(config.videos).toEqual({
    dir: join('/srv/tollgate', 'videos'),
    deadlineMs: 3_600_000,
    pollInitialMs: 2_000,
    pollMaxMs: 15_000,
    sweepIntervalMs: 60_000,
    queueSchema: 'pgboss',
    workers: 4,
    sandboxRenderMs: 3_000,
    sandboxSlowMs: 30_000,
  });
  expect(loadConfig({ TOLLGATE_VIDEO_DIR: '/data/clips', TOLLGATE_VIDEO_WORKERS: '0' }).videos).toMatchObject({ dir: '/data/clips', workers: 0 });
});

test.each([
  ['TOLLGATE_VIDEO_DEADLINE_SECONDS', '0'],
  ['TOLLGATE_VIDEO_POLL_INITIAL_MS', 'fast'],
  ['TOLLGATE_VIDEO_POLL_MAX_MS', '60000'],
  ['TOLLGATE_VIDEO_SWEEP_INTERVAL_MS', '1'],
  ['TOLLGATE_VIDEO_QUEUE_SCHEMA', 'Bad-Schema'],
  ['TOLLGATE_VIDEO_WORKERS', '-1'],
  ['TOLLGATE_SANDBOX_VIDEO_RENDER_MS', 'later'],
])('%s=%s stops the start with a message naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(name);
});

test('the longest poll wait cannot be below the first', () => {
  expect(() => loadConfig({ TOLLGATE_VIDEO_POLL_INITIAL_MS: '5000', TOLLGATE_VIDEO_POLL_MAX_MS: '1000' })).toThrow('TOLLGATE_VIDEO_POLL_MAX_MS');
});
