import { ConfigError, loadConfig } from '../../src/config';

test('defaults serve the embedded setup', () => {
  const config = loadConfig({});
  expect(config).toMatchObject({ port: 8080, databaseUrl: null, redisUrl: null, adminToken: null, catalogFile: null, logLevel: 'info', redisKeyPrefix: 'tollgate:' });
  expect(config.dataDir).toMatch(/\.tollgate$/);
  expect(config.vendorTimeouts).toEqual({ connectMs: 10_000, headersMs: 120_000, bodyIdleMs: 120_000 });
});

test.each([
  ['PORT', 'eighty'],
  ['PORT', '70000'],
  ['DATABASE_URL', 'mysql://localhost/db'],
  ['REDIS_URL', 'localhost:6379'],
  ['TOLLGATE_ADMIN_TOKEN', 'short'],
  ['LOG_LEVEL', 'loud'],
  ['TOLLGATE_MAX_BODY_BYTES', '12'],
  ['TOLLGATE_SESSION_TTL_SECONDS', '1.5'],
  ['TOLLGATE_VENDOR_CONNECT_TIMEOUT_MS', '0'],
  ['TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS', 'soon'],
  ['TOLLGATE_VENDOR_BODY_IDLE_TIMEOUT_MS', '-1'],
  ['TOLLGATE_SETTLEMENT', 'eventually'],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
  ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'grpc://collector:4317'],
])('%s=%s stops the start with a message naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(name);
});

test('set values are taken', () => {
  const config = loadConfig({ PORT: '9090', DATABASE_URL: 'postgres://u@h:5432/d', REDIS_URL: 'redis://127.0.0.1:6379', TOLLGATE_ADMIN_TOKEN: 'x'.repeat(16), LOG_LEVEL: 'warn', TOLLGATE_VENDOR_HEADERS_TIMEOUT_MS: '500' });
  expect(config).toMatchObject({ port: 9090, databaseUrl: 'postgres://u@h:5432/d', redisUrl: 'redis://127.0.0.1:6379', logLevel: 'warn' });
  expect(config.vendorTimeouts.headersMs).toBe(500);
});

test('traces: off by default, on with an OTLP endpoint (the traces URL as the standard variables say)', () => {
  expect(loadConfig({}).otlpTracesUrl).toBeNull();
  expect(loadConfig({}).otelServiceName).toBe('tollgate');
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otlpTracesUrl).toBe('http://collector:4318/v1/traces');
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/custom/traces' }).otlpTracesUrl).toBe('https://b/custom/traces');
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'true' }).otlpTracesUrl).toBeNull();
  expect(loadConfig({ OTEL_SERVICE_NAME: 'gateway-eu' }).otelServiceName).toBe('gateway-eu');
});
