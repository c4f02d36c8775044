/** Child process of `npm run bench`: the fake OpenAI upstream, alone in its process. */
import { startFakeOpenAI } from '../test/fakes/openai';

async function main(): Promise<void> {
  const fake = await startFakeOpenAI({ apiKey: 'sk-bench' });
  fake.script({ text: 'The quick brown fox jumps over the lazy dog. '.repeat(3), usage: { input: 24, output: 30 }, chunkSize: 12 });
  // The fake records every request for tests; a bench sends millions, so forget them as it goes.
  setInterval(() => (fake.requests.length = 0), 1_000).unref();
  process.send?.({ url: fake.url });
  process.on('disconnect', () => void fake.close().finally(() => process.exit(0)));
}
void main();
