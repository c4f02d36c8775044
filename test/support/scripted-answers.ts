import type { FakedTextHarness } from './vendor-fakes';

type Fakes = Pick<FakedTextHarness, 'openai' | 'anthropic' | 'gemini'>;

/**
 * Answers the vendor fakes give to the tests that read one answer two ways (whole and event by
 * event, batch by batch and event by event) and compare: each covers what its format carries.
 */
export const SCRIPTED_ANSWERS = {
  openaiText: (on: Fakes) => on.openai.script({ text: 'A plain answer, several words long.', usage: { input: 12, output: 9, cached: 4 } }),
  openaiToolsAndReasoning: (on: Fakes) =>
    on.openai.script({
      reasoning: 'Thinking about the weather.',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_b', name: 'get_time', arguments: '{"zone":"CET"}' },
      ],
      usage: { input: 30, output: 80 },
    }),
  anthropicThinkingTextTool: (on: Fakes) =>
    on.anthropic.script({
      thinking: 'Let me see.',
      signature: 'sig-1',
      text: 'Here it is.',
      toolCalls: [{ id: 'toolu_1', name: 'lookup', input: { q: 'x' } }],
      usage: { input: 50, output: 60, cacheRead: 10 },
    }),
  geminiThoughtsAndText: (on: Fakes) =>
    on.gemini.script({ text: 'From Gemini.', thoughts: 'Hmm.', usage: { prompt: 15, candidates: 7, thoughts: 5 } }),
};
