/** A plan: the models it includes, a monthly allowance at API prices, a per-user request window. */
export interface PlanDefinition {
  name: string;
  models: string[];
  monthlyAllowanceMicro: bigint;
  requestsPerMinute: number;
}

/** The plans of a deployment without a limits file (the operator can replace them). */
export const DEFAULT_PLANS: readonly PlanDefinition[] = [
  {
    name: 'starter',
    models: ['sandbox/echo', 'sandbox/reasoner', 'openai/gpt-4o-mini', 'anthropic/claude-haiku-4-5', 'google/gemini-2.5-flash'],
    monthlyAllowanceMicro: 5_000_000n,
    requestsPerMinute: 20,
  },
  {
    name: 'pro',
    models: [
      'sandbox/echo',
      'sandbox/reasoner',
      'openai/gpt-4o-mini',
      'openai/gpt-4.1',
      'openai/o4-mini',
      'anthropic/claude-sonnet-4-5',
      'anthropic/claude-haiku-4-5',
      'google/gemini-2.5-flash',
      'google/gemini-2.5-pro',
    ],
    monthlyAllowanceMicro: 50_000_000n,
    requestsPerMinute: 60,
  },
];
