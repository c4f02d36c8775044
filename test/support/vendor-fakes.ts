import { startFakeAnthropic, type FakeAnthropicReply } from '../fakes/anthropic';
import { startFakeGemini, type FakeGeminiReply } from '../fakes/gemini';
import { startFakeOpenAI, type FakeOpenAIReply, type FakeVendor } from '../fakes/openai';
import { startTextHarness, textAccount, type TextAccount, type TextHarness } from './text';

/** The OpenAI, Anthropic and Gemini fakes together, for a Tollgate serving models of each. */
export interface VendorFakes {
  openai: FakeVendor<FakeOpenAIReply>;
  anthropic: FakeVendor<FakeAnthropicReply>;
  gemini: FakeVendor<FakeGeminiReply>;
  /** The environment that points a Tollgate at the three (startTextHarness's argument). */
  env: Record<string, string>;
  /** Back to each fake's default answer. */
  reset(): void;
  close(): Promise<void>;
}

export async function startVendorFakes(): Promise<VendorFakes> {
  const [openai, anthropic, gemini] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeGemini()]);
  return {
    openai,
    anthropic,
    gemini,
    env: {
      OPENAI_API_KEY: openai.apiKey!,
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_API_KEY: anthropic.apiKey!,
      ANTHROPIC_BASE_URL: anthropic.url,
      GEMINI_API_KEY: gemini.apiKey!,
      GEMINI_BASE_URL: gemini.url,
    },
    reset: () => {
      openai.script();
      anthropic.script();
      gemini.script();
    },
    close: async () => {
      await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
    },
  };
}

/** A Tollgate serving models of the three fakes, and a funded account on it (textHarnessOnFakes). */
export interface FakedTextHarness extends Pick<VendorFakes, 'openai' | 'anthropic' | 'gemini'> {
  h: TextHarness;
  a: TextAccount;
}

/**
 * For a test file: the three fakes and a Tollgate serving their models, started before its tests
 * and stopped after them; each fake back to its default answer before each test. The fields are
 * set once the file's tests start.
 */
export function textHarnessOnFakes(): FakedTextHarness {
  const on = {} as FakedTextHarness;
  let fakes: VendorFakes | undefined;
  beforeAll(async () => {
    fakes = await startVendorFakes();
    Object.assign(on, { openai: fakes.openai, anthropic: fakes.anthropic, gemini: fakes.gemini });
    on.h = await startTextHarness(fakes.env);
    on.a = await textAccount(on.h.t);
  });
  afterAll(async () => {
    await on.h?.stop();
    await fakes?.close();
  });
  beforeEach(() => fakes?.reset());
  return on;
}
