/**
 * Switches that break one rule of the lease protocol each, so a test can show the checker catches the break.
 * All off is the design in docs/design/lease-protocol.md, the lapsed-relay standby that the model added to it
 * ("What the model changed") included.
 */
export interface ModelFlags {
  /** Completions delete rows without `owner = me AND epoch = e`. */
  readonly noEpochGuard?: boolean;
  /** A relay releases a partition when it decides to drain it, while its publishes are still in flight. */
  readonly releaseBeforeDrain?: boolean;
  /** `validUntil` counts from the heartbeat reply's receipt, not from its send. */
  readonly validUntilFromReceipt?: boolean;
  /** The reap takes relays whose row has half a lease or less left, not only expired ones. */
  readonly reapBeforeExpiry?: boolean;
  /** The heartbeat has no `expires_at > clock_timestamp()` guard and re-inserts a reaped row. */
  readonly heartbeatRevives?: boolean;
  /** How far a relay's clock rate may stray from the database's: 0.15 is ±15 %. The documented limit is 0.2. */
  readonly clockRateBound?: number;
  /** Invariant (a) also over sends that a pause froze between their start and the socket write. */
  readonly countFrozenSends?: boolean;
  /** Invariant (c) also while some relay gets its heartbeat replies late (its beats still extend its row). */
  readonly livenessDuringSlowReplies?: boolean;
  /**
   * Without the fix for that gap: a relay whose lease ran out while its row lives keeps counting for a share
   * and holding its partitions, instead of beating as `leaving`, releasing what the database still gives it,
   * and acquiring again only after a reply that came back before the `validUntil` of its own send.
   */
  readonly noStandbyWhenLapsed?: boolean;
}

export const LEASE_MS = 1500;
export const PUBLISH_TIMEOUT_MS = 500;
/** The simulation's step, in real (database) milliseconds. */
export const STEP_MS = 5;
