import { randomBytes } from 'node:crypto';

/** Outcome of one payment attempt; `reference` identifies it at the payment provider. */
export interface PaymentResult {
  ok: boolean;
  reference: string | null;
  /** Why it failed, for the operator (never shown to API callers as is). */
  message?: string;
}

/**
 * How automatic top-ups take money (docs/api.md, Billing facts the API shows). A real implementation charges
 * the account's stored payment method; it must answer within a bounded time, because the
 * account's top-up decision is serialised while the call runs.
 */
export interface PaymentPort {
  charge(accountId: string, amountMicro: bigint): Promise<PaymentResult>;
}

/** The built-in port: always succeeds, moves no real money. Counts its calls for tests and demos. */
export class SandboxPaymentPort implements PaymentPort {
  private charged = 0;

  get chargeCount(): number {
    return this.charged;
  }

  async charge(_accountId: string, amountMicro: bigint): Promise<PaymentResult> {
    if (amountMicro <= 0n) return { ok: false, reference: null, message: 'amount must be positive' };
    this.charged++;
    return { ok: true, reference: `sandbox_${randomBytes(8).toString('hex')}` };
  }
}
