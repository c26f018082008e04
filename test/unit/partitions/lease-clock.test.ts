import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors.js';
import { mayStartPublish, nextHeartbeatAt, publishDeadline, resolveLeaseTiming, validUntil } from '../../../src/core/partitions/lease-clock.js';
import { seeded } from '../../support/seeded-random.js';

describe('resolveLeaseTiming', () => {
  it('accepts leaseMs = 3 x publishTimeoutMs and freezes the result', () => {
    const timing = resolveLeaseTiming({ leaseMs: 30_000, publishTimeoutMs: 10_000 });
    expect(timing).toEqual({ leaseMs: 30_000, publishTimeoutMs: 10_000 });
    expect(Object.isFrozen(timing)).toBe(true);
  });

  it('refuses a lease shorter than three publish timeouts, naming both options and the fix', () => {
    const attempt = () => resolveLeaseTiming({ leaseMs: 29_999, publishTimeoutMs: 10_000 });
    expect(attempt).toThrow(ConfigurationError);
    expect(attempt).toThrow(/leaseMs \(29999\) must be at least 3 x publishTimeoutMs \(10000\); raise leaseMs to 30000/);
    try {
      attempt();
    } catch (error) {
      expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
    }
  });

  it('refuses durations that are not positive whole milliseconds', () => {
    for (const [leaseMs, publishTimeoutMs] of [
      [0, 0],
      [30_000, -1],
      [30_000.5, 100],
      [Number.NaN, 10],
    ] as const) {
      expect(() => resolveLeaseTiming({ leaseMs, publishTimeoutMs })).toThrow(/must be positive whole milliseconds/);
    }
  });
});

describe('lease timing from a heartbeat send time', () => {
  const timing = resolveLeaseTiming({ leaseMs: 30_000, publishTimeoutMs: 10_000 });

  it('trusts 0.8 of the lease from the send, stops publishes one timeout earlier, and beats every third', () => {
    expect(validUntil(1000, timing)).toBe(25_000);
    expect(publishDeadline(1000, timing)).toBe(15_000);
    expect(nextHeartbeatAt(1000, timing)).toBe(11_000);
    expect(mayStartPublish(15_000, 1000, timing)).toBe(true);
    expect(mayStartPublish(15_001, 1000, timing)).toBe(false);
  });

  it('gives a late reply nothing: a beat sent at 0 and answered after 0.8 lease allows no publish', () => {
    expect(mayStartPublish(0.9 * timing.leaseMs, 0, timing)).toBe(false);
  });

  it('for every valid timing: the last publish ends by validUntil, before the database can expire the relay, and the next beat comes first', () => {
    const random = seeded(7);
    for (let i = 0; i < 1000; i++) {
      const publishTimeoutMs = 1 + Math.floor(random() * 60_000);
      const leaseMs = 3 * publishTimeoutMs + Math.floor(random() * 100_000);
      const t = resolveLeaseTiming({ leaseMs, publishTimeoutMs });
      const sentAt = random() * 1e9;
      const lastPublishEnds = publishDeadline(sentAt, t) + publishTimeoutMs;
      expect(lastPublishEnds).toBeLessThanOrEqual(validUntil(sentAt, t));
      // The database expires the relay no earlier than leaseMs after the send, on its own clock; with clock
      // rates within 20 %, 0.8 lease of local time is at most a full lease of database time.
      expect(validUntil(sentAt, t)).toBeLessThan(sentAt + leaseMs);
      expect(nextHeartbeatAt(sentAt, t)).toBeLessThan(publishDeadline(sentAt, t));
    }
  });
});
