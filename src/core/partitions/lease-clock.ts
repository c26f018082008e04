import { ConfigurationError } from '../errors.js';

/**
 * The share of a lease a relay trusts its own clock for. The database expires a relay `leaseMs` after it
 * executed the heartbeat, which is after the relay sent it; the relay stops at 0.8 of that, measured from
 * the send, so the two clocks may run at rates up to 20 % apart. Their offsets never enter.
 */
export const TRUSTED_LEASE_SHARE = 0.8;

/** Heartbeats per lease: a relay survives two lost beats before its lease runs out. */
export const BEATS_PER_LEASE = 3;

export interface LeaseTiming {
  readonly leaseMs: number;
  readonly publishTimeoutMs: number;
}

/**
 * Checks that a publish started at the last allowed instant ends before the lease, with the next beat due
 * well before then: `leaseMs >= 3 x publishTimeoutMs`. Returns the timing frozen.
 */
export function resolveLeaseTiming(timing: LeaseTiming): LeaseTiming {
  const { leaseMs, publishTimeoutMs } = timing;
  if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0 || !Number.isSafeInteger(publishTimeoutMs) || publishTimeoutMs <= 0) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `relay options leaseMs (${leaseMs}) and publishTimeoutMs (${publishTimeoutMs}) must be positive whole milliseconds`,
    );
  }
  if (leaseMs < BEATS_PER_LEASE * publishTimeoutMs) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `relay option leaseMs (${leaseMs}) must be at least ${BEATS_PER_LEASE} x publishTimeoutMs (${publishTimeoutMs}); raise leaseMs to ${BEATS_PER_LEASE * publishTimeoutMs} or lower publishTimeoutMs`,
    );
  }
  return Object.freeze({ leaseMs, publishTimeoutMs });
}

/**
 * Monotonic instant (`performance.now()` ms) until which a relay may act on its partitions, from the send
 * time of its latest successful heartbeat. A reply that arrives late confers nothing past this: the send
 * time, not the reply time, counts.
 */
export function validUntil(beatSentAt: number, timing: LeaseTiming): number {
  return beatSentAt + TRUSTED_LEASE_SHARE * timing.leaseMs;
}

/** The last instant a publish may start: one that starts then and times out still ends by `validUntil`. */
export function publishDeadline(beatSentAt: number, timing: LeaseTiming): number {
  return validUntil(beatSentAt, timing) - timing.publishTimeoutMs;
}

/** Whether a publish may start at `now` under the heartbeat sent at `beatSentAt`. */
export function mayStartPublish(now: number, beatSentAt: number, timing: LeaseTiming): boolean {
  return now <= publishDeadline(beatSentAt, timing);
}

/** When to send the next heartbeat after the one sent at `beatSentAt`. */
export function nextHeartbeatAt(beatSentAt: number, timing: LeaseTiming): number {
  return beatSentAt + timing.leaseMs / BEATS_PER_LEASE;
}
