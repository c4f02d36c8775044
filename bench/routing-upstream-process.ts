/** Child process of `npm run bench:routing`: a fake OpenAI upstream that answers, or (ROUTING_UPSTREAM_FAIL=1) fails every request with a 503 at once. */
import { startFakeOpenAI } from '../test/fakes/openai';

async function main(): Promise<void> {
  const fake = await startFakeOpenAI({ apiKey: 'sk-bench' });
  if (process.env.ROUTING_UPSTREAM_FAIL === '1') fake.script({ status: 503, errorMessage: 'overloaded (bench)' });
  else fake.script({ text: 'The quick brown fox jumps over the lazy dog. '.repeat(3), usage: { input: 24, output: 30 }, chunkSize: 12 });
  setInterval(() => (fake.requests.length = 0), 1_000).unref();
  process.send?.({ url: fake.url });
  process.on('disconnect', () => void fake.close().finally(() => process.exit(0)));
}
void main();
