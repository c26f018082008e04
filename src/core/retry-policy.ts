import { PublishError } from './errors.js';

export interface RetryPolicy {
  /** First retry delay in ms. */
  readonly baseDelayMs: number;
  /** Largest retry delay in ms. */
  readonly maxDelayMs: number;
  /** Publish attempts before a message is parked as dead. */
  readonly maxAttempts: number;
  /** Share of each delay that is randomized, 0..1 ("equal jitter" at 0.5). */
  readonly jitter: number;
}

/**
 * Delay before attempt `attempts + 1`, after `attempts` failed ones: exponential, capped, jittered.
 * `random` is injectable so that tests can pin it.
 */
export function retryDelayMs(policy: RetryPolicy, attempts: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempts - 1);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(exponent, 30));
  const jittered = ceiling * (1 - policy.jitter) + ceiling * policy.jitter * random();
  return Math.max(0, Math.round(jittered));
}

/**
 * The delay before the next attempt after a failure: the backoff, or longer when the destination asked for a
 * pause (`PublishError.retryAfterMs`, from an HTTP `Retry-After`).
 */
export function retryInMs(policy: RetryPolicy, attempts: number, error: unknown, random: () => number = Math.random): number {
  const backoff = retryDelayMs(policy, attempts, random);
  const asked = error instanceof PublishError ? error.retryAfterMs : undefined;
  return asked === undefined ? backoff : Math.max(backoff, Math.ceil(asked));
}

export function shouldPark(policy: RetryPolicy, attempts: number): boolean {
  return attempts >= policy.maxAttempts;
}
