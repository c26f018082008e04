import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { retryDelayMs, retryInMs, shouldPark, type RetryPolicy } from '../../src/core/retry-policy.js';
import { seeded } from '../support/seeded-random.js';

const policy: RetryPolicy = { baseDelayMs: 1000, maxDelayMs: 60_000, maxAttempts: 10, jitter: 0.5 };
const noJitter: RetryPolicy = { ...policy, jitter: 0 };
const low = () => 0;
const high = () => 1;

describe('retryDelayMs', () => {
  it('grows exponentially from the base delay after the first failed attempt', () => {
    expect([1, 2, 3, 4, 5].map((attempts) => retryDelayMs(noJitter, attempts))).toEqual([1000, 2000, 4000, 8000, 16_000]);
  });

  it('treats 0 attempts like the first one (never below the base delay)', () => {
    expect(retryDelayMs(noJitter, 0)).toBe(1000);
    expect(retryDelayMs(noJitter, -3)).toBe(1000);
  });

  it('caps the delay at maxDelayMs and never overflows for huge attempt counts', () => {
    expect(retryDelayMs(noJitter, 7)).toBe(60_000); // 64 s capped to 60 s
    for (const attempts of [50, 1000, 1e9, Number.MAX_SAFE_INTEGER]) {
      const delay = retryDelayMs(noJitter, attempts);
      expect(delay).toBe(60_000);
      expect(Number.isFinite(delay)).toBe(true);
    }
  });

  it('keeps jittered delays within [ceiling * (1 - jitter), ceiling]: random pinned at 0 and 1', () => {
    expect(retryDelayMs(policy, 1, low)).toBe(500);
    expect(retryDelayMs(policy, 1, high)).toBe(1000);
    expect(retryDelayMs(policy, 3, low)).toBe(2000);
    expect(retryDelayMs(policy, 3, high)).toBe(4000);
    expect(retryDelayMs(policy, 20, low)).toBe(30_000);
    expect(retryDelayMs(policy, 20, high)).toBe(60_000);
  });

  it('with full jitter (1) may go down to 0, with none (0) ignores random', () => {
    const full = { ...policy, jitter: 1 };
    expect(retryDelayMs(full, 2, low)).toBe(0);
    expect(retryDelayMs(full, 2, high)).toBe(2000);
    expect(retryDelayMs(noJitter, 2, low)).toBe(2000);
    expect(retryDelayMs(noJitter, 2, high)).toBe(2000);
  });

  it('stays inside the jitter band for seeded random draws and every jitter', () => {
    const random = seeded(2024);
    for (let i = 0; i < 5000; i++) {
      const jitter = Math.round(random() * 100) / 100;
      const attempts = 1 + Math.floor(random() * 40);
      const p: RetryPolicy = { ...policy, jitter };
      const ceiling = Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (attempts - 1));
      const delay = retryDelayMs(p, attempts, random);
      expect(Number.isInteger(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling * (1 - jitter)));
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });

  it('uses Math.random by default and stays in the band', () => {
    for (let i = 0; i < 200; i++) {
      const delay = retryDelayMs(policy, 2);
      expect(delay).toBeGreaterThanOrEqual(1000);
      expect(delay).toBeLessThanOrEqual(2000);
    }
  });

  it('is non-decreasing in attempts for a fixed draw', () => {
    for (const r of [0, 0.25, 0.5, 1]) {
      const delays = Array.from({ length: 15 }, (_, i) => retryDelayMs(policy, i + 1, () => r));
      for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1] as number);
    }
  });
});

describe('retryInMs', () => {
  it('waits as long as the destination asked (Retry-After) when that is longer than the backoff', () => {
    const limited = new PublishError('OUTBOXER_RATE_LIMITED', 'slow down', { retryAfterMs: 30_000.2 });
    expect(retryInMs(noJitter, 1, limited)).toBe(30_001);
  });

  it('keeps the backoff when it is longer than what was asked, or nothing was asked', () => {
    const soon = new PublishError('OUTBOXER_RATE_LIMITED', 'slow down', { retryAfterMs: 10 });
    expect(retryInMs(noJitter, 3, soon)).toBe(4000);
    expect(retryInMs(noJitter, 3, new Error('driver'))).toBe(4000);
    expect(retryInMs(policy, 3, new PublishError('OUTBOXER_PUBLISH_FAILED', 'nack'), low)).toBe(retryDelayMs(policy, 3, low));
  });
});

describe('shouldPark', () => {
  it('parks once attempts reach maxAttempts, not before', () => {
    expect(shouldPark(policy, 0)).toBe(false);
    expect(shouldPark(policy, 9)).toBe(false);
    expect(shouldPark(policy, 10)).toBe(true);
    expect(shouldPark(policy, 11)).toBe(true);
  });

  it('with maxAttempts 1 parks after the first failure', () => {
    expect(shouldPark({ ...policy, maxAttempts: 1 }, 1)).toBe(true);
    expect(shouldPark({ ...policy, maxAttempts: 1 }, 0)).toBe(false);
  });
});
