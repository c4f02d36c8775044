import type { ProviderError } from '../generation/errors';

/**
 * Deployment health: one circuit breaker per deployment of a model (docs/routing.md, Health).
 * Closed, a deployment takes traffic; after `failureThreshold` failures in a row (or one 429
 * with a Retry-After) it is cooled: no traffic until its cooldown ends. Then it is half-open:
 * one request at a time is let through as a probe; success closes it, failure cools it again
 * for twice as long (up to `maxCooldownMs`). Reads are in memory (the hot path asks per
 * request); with a shared store (Redis) every instance learns of a cooled deployment, and of
 * its recovery, within the store's poll interval.
 */

export interface BreakerOptions {
  /** Failures in a row that cool a deployment; 0: never by count (a 429's Retry-After still cools). */
  failureThreshold: number;
  /** First cooldown; doubled after each failed probe. */
  cooldownMs: number;
  maxCooldownMs: number;
  /** Longest Retry-After a 429 cools a deployment for. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = {
  failureThreshold: 3,
  cooldownMs: 10_000,
  maxCooldownMs: 300_000,
  maxRetryAfterMs: 600_000,
};

/** What every instance shares of a deployment's health: until when it is cooled. */
export interface SharedHealth {
  /** Tells the other instances a deployment is cooled until `untilMs` (epoch ms), or healthy again (0). */
  publish(key: string, untilMs: number): void;
  /** Starts delivering the shared state: every cooled deployment with its end (epoch ms). */
  start(onSnapshot: (cooled: ReadonlyMap<string, number>) => void): void;
  close(): Promise<void>;
}

export type BreakerState = 'closed' | 'cooled' | 'half-open';

/** One deployment's health as the operator sees it. */
export interface HealthView {
  state: BreakerState;
  consecutiveFailures: number;
  /** When the cooldown ends (epoch ms); null unless cooled. */
  cooledUntil: number | null;
  /** The last failure's message, if any since it was last healthy. */
  lastError: string | null;
}

/** A request's permission to use a deployment: `probe` when it is the half-open deployment's one trial. */
export type Admission = 'closed' | 'probe' | null;

interface Breaker {
  failures: number;
  /** Cooled by this instance until (epoch ms). */
  localUntil: number;
  /** Cooled by another instance until (epoch ms), from the shared store. */
  sharedUntil: number;
  /** Cooled at least once since it was last healthy: past its cooldown it is half-open. */
  tripped: boolean;
  cooldownMs: number;
  probing: boolean;
  lastError: string | null;
  /** Its current cooldown is a vendor's 429 Retry-After (known to this instance only). */
  rateLimited: boolean;
}

export class DeploymentHealth {
  private readonly breakers = new Map<string, Breaker>();
  private markSynced: () => void = () => undefined;
  /** Resolves once the shared store's state was first read (at once without one). */
  readonly synced: Promise<void>;

  constructor(
    private readonly options: BreakerOptions = DEFAULT_BREAKER,
    private readonly now: () => number = Date.now,
    private readonly shared: SharedHealth | null = null,
    /** Told each time a deployment is cooled (metrics). */
    private readonly onCooled?: (key: string, ms: number) => void,
  ) {
    this.synced = shared ? new Promise((resolve) => (this.markSynced = resolve)) : Promise.resolve();
    shared?.start((cooled) => {
      this.applyShared(cooled);
      this.markSynced();
    });
  }

  /** Whether a request may use the deployment now; a probe must be followed by succeeded, failed or abandoned. */
  admit(key: string): Admission {
    const breaker = this.breakers.get(key);
    if (breaker === undefined) return 'closed';
    const now = this.now();
    if (now < Math.max(breaker.localUntil, breaker.sharedUntil)) return null;
    if (!breaker.tripped) return 'closed';
    if (breaker.probing) return null;
    breaker.probing = true;
    return 'probe';
  }

  /** When a cooled deployment can next be tried (epoch ms); 0 when it can now. */
  availableAt(key: string): number {
    const breaker = this.breakers.get(key);
    if (breaker === undefined) return 0;
    const until = Math.max(breaker.localUntil, breaker.sharedUntil);
    return until > this.now() ? until : breaker.probing ? this.now() + 1_000 : 0;
  }

  /** Whether the deployment is cooled because its vendor rate-limited it (a 429 with Retry-After on this instance). */
  rateLimited(key: string): boolean {
    const breaker = this.breakers.get(key);
    return breaker !== undefined && breaker.rateLimited && breaker.localUntil > this.now() && breaker.localUntil >= breaker.sharedUntil;
  }

  succeeded(key: string): void {
    const breaker = this.breakers.get(key);
    if (breaker === undefined) return;
    const wasTripped = breaker.tripped;
    this.breakers.delete(key);
    if (wasTripped) this.shared?.publish(key, 0);
  }

  /** A probe that ended with neither an answer nor a deployment failure (the client went away). */
  abandoned(key: string): void {
    const breaker = this.breakers.get(key);
    if (breaker) breaker.probing = false;
  }

  /** A failure of the deployment (not of the request): counts toward cooling it, or cools it at once (429 with Retry-After, a failed probe). */
  failed(key: string, error: ProviderError): void {
    let breaker = this.breakers.get(key);
    if (breaker === undefined) {
      breaker = {
        failures: 0,
        localUntil: 0,
        sharedUntil: 0,
        tripped: false,
        cooldownMs: this.options.cooldownMs,
        probing: false,
        lastError: null,
        rateLimited: false,
      };
      this.breakers.set(key, breaker);
    }
    breaker.failures++;
    breaker.lastError = error.message;
    const wasProbe = breaker.probing;
    breaker.probing = false;
    let coolMs = 0;
    const rateLimited = error.vendorStatus === 429 && error.retryAfterMs !== null;
    if (rateLimited) coolMs = Math.min(Math.max(error.retryAfterMs, 1), this.options.maxRetryAfterMs);
    else if (wasProbe) {
      breaker.cooldownMs = Math.min(breaker.cooldownMs * 2, this.options.maxCooldownMs);
      coolMs = breaker.cooldownMs;
    } else if (this.options.failureThreshold > 0 && breaker.failures >= this.options.failureThreshold && this.now() >= breaker.localUntil)
      coolMs = breaker.cooldownMs;
    if (coolMs === 0) return;
    breaker.tripped = true;
    breaker.rateLimited = rateLimited;
    breaker.localUntil = this.now() + coolMs;
    this.shared?.publish(key, breaker.localUntil);
    this.onCooled?.(key, coolMs);
  }

  view(key: string): HealthView {
    const breaker = this.breakers.get(key);
    if (breaker === undefined) return { state: 'closed', consecutiveFailures: 0, cooledUntil: null, lastError: null };
    const until = Math.max(breaker.localUntil, breaker.sharedUntil);
    const cooled = until > this.now();
    return {
      state: cooled ? 'cooled' : breaker.tripped ? 'half-open' : 'closed',
      consecutiveFailures: breaker.failures,
      cooledUntil: cooled ? until : null,
      lastError: breaker.lastError,
    };
  }

  close(): Promise<void> {
    return this.shared?.close() ?? Promise.resolve();
  }

  /**
   * Another instance's view: cooled deployments trip here too (past its cooldown, one still listed
   * is half-open: no probe has succeeded yet); one no longer listed recovered there.
   */
  private applyShared(cooled: ReadonlyMap<string, number>): void {
    const now = this.now();
    for (const [key, until] of cooled) {
      if (until <= now && !this.breakers.has(key)) {
        this.breakers.set(key, {
          failures: 0,
          localUntil: 0,
          sharedUntil: until,
          tripped: true,
          cooldownMs: this.options.cooldownMs,
          probing: false,
          lastError: 'cooled by another instance',
          rateLimited: false,
        });
        continue;
      }
      let breaker = this.breakers.get(key);
      if (breaker === undefined) {
        breaker = {
          failures: 0,
          localUntil: 0,
          sharedUntil: 0,
          tripped: true,
          cooldownMs: this.options.cooldownMs,
          probing: false,
          lastError: 'cooled by another instance',
          rateLimited: false,
        };
        this.breakers.set(key, breaker);
      }
      breaker.tripped = true;
      breaker.sharedUntil = until;
    }
    for (const [key, breaker] of this.breakers) {
      if (cooled.has(key) || breaker.sharedUntil === 0) continue;
      // Recovered on another instance (its probe succeeded): healthy here too, unless this one cooled it itself since.
      if (breaker.localUntil > now) breaker.sharedUntil = 0;
      else this.breakers.delete(key);
    }
  }
}
