/** Child process of `npm run bench:images`: the fake OpenAI Images upstream, alone in its process. */
import { startFakeOpenAIImages } from '../test/fakes/openai-images';

async function main(): Promise<void> {
  const fake = await startFakeOpenAIImages({ apiKey: 'sk-bench' });
  fake.script({ delayMs: Number(process.env.BENCH_IMAGE_VENDOR_MS ?? 200) });
  // The fake keeps every upload for tests; the bench would pile them up, so forget them as it goes.
  setInterval(() => (fake.requests.length = 0), 200).unref();
  process.send?.({ url: fake.url });
  process.on('disconnect', () => void fake.close().finally(() => process.exit(0)));
}
void main();
