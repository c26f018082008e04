/**
 * A partition held by one relay. `epoch` is the fencing token of the grant (a decimal string, as the store's
 * bigint): it goes up by one on every grant of the partition, and every later write for the partition names it.
 */
export interface PartitionLease {
  readonly partition: number;
  readonly epoch: string;
  /** Grants taken over from a dead owner since the partition last made progress (0 for clean hand-overs). */
  readonly unclean: number;
}

/** One of my partitions: `draining` once I announced I will release it. */
export interface HeldPartition extends PartitionLease {
  readonly state: 'owned' | 'draining';
}

/** A relay whose lease has not run out, by the database clock. */
export interface LiveRelay {
  readonly id: string;
  /** What the relay called itself at `join` (host, pid), for operators. */
  readonly name: string;
  /** It announced it is leaving: it takes nothing more and counts for no share. */
  readonly leaving: boolean;
  /** Partitions it owns or is draining. */
  readonly held: number;
  /** Time left on its lease, measured by the database clock at the read. */
  readonly expiresInMs: number;
  /**
   * Why it cannot publish (its broker unreachable), as it said with its last beat; `null` while it publishes.
   * A relay in trouble counts for no share while a healthy relay is live (docs/design/lease-protocol.md, "Hand-over and broker trouble").
   */
  readonly trouble: string | null;
}

/** What a relay says about itself with its join and every beat. */
export interface RelayReport {
  /** Why it cannot publish now (its broker unreachable), or `null`. Written to its relays row with `trouble_since`. */
  readonly trouble?: string | null;
}

/** The partitioning of the table (one row, written by migrations and operators, never by relays). */
export interface PartitioningConfig {
  readonly partitionCount: number;
  /** Partitions of other generations (a resize in progress) are never granted. */
  readonly generation: number;
  /**
   * The partition count a resize is moving to, while it waits; `null` otherwise. While it is set no partition is
   * granted, and every relay must drain and release everything it holds (once its publishes ended and their
   * completions committed) and acquire nothing; a resize waits (bounded) until no relay whose lease runs holds a
   * partition. When it clears, the table is at a new `generation` with the new `partitionCount`. Read and
   * complete with the count of a membership read made after the grant, while holding it (the count cannot change
   * while a live relay holds a partition), never with one read before the grant.
   */
  readonly resizeTo: number | null;
  /** Whether a grant is possible now: no resize waits. */
  readonly grantsOpen: boolean;
}

/** What one relay knows about the group after a heartbeat, a join or a status read. */
export interface Membership {
  readonly relayId: string;
  /** My lease is still running: false once it ran out or I was reaped; I then drop every partition at once. */
  readonly alive: boolean;
  /** The live relays (mine included while alive), by id. */
  readonly relays: readonly LiveRelay[];
  /** The partitions that name me as owner, by number. */
  readonly owned: readonly HeldPartition[];
  /** Partitions an `acquire` could grant now: free ones, and those of relays whose lease ran out. */
  readonly grantable: number;
  readonly config: PartitioningConfig;
}

/**
 * The partition-lease role of engine v2: relays register, keep their lease with heartbeats, and take and give
 * back partitions. `Relay` uses it with the `PartitionReader`.
 *
 * Contract (every store):
 * - **Database clock only.** Every time (expiry, reap, fence) is computed by the database; a relay's own clock
 *   only measures how long ago it sent its last beat.
 * - **One owner.** A partition is granted to one relay at a time, and each grant raises its epoch. It is granted
 *   only when free or when its owner's lease ran out by the database clock (the owner is then reaped: its
 *   relays row deleted, all its partitions freed with `unclean + 1`, in one transaction).
 * - **No revival.** A relay whose lease ran out can never extend it, nor get a partition back without a new
 *   grant under a new id: it must `join` again.
 * - **Fenced give-back.** `drain` and `release` change a partition only while it names the caller as owner at
 *   the given epoch; any other call changes nothing and says so by its count.
 * - **Grants open** only while no resize waits (`resizeTo` null), for partitions of the current generation.
 */
export interface RelayLeases {
  /**
   * Registers a new relay incarnation with a lease of `leaseMs` from now (database clock) and returns its
   * membership. The id is made here, fresh on every call, so a restarted or reaped relay is never confused with
   * its earlier self.
   */
  join(relay: { readonly name: string; readonly leaseMs: number } & RelayReport): Promise<Membership>;
  /**
   * Extends my lease to `leaseMs` (given at join) from now, in one statement that also reads the membership.
   * Refused once the lease ran out (`alive: false`, nothing written): the relay must stop publishing and join
   * again. With `leaving`, marks me as leaving (for good): I take nothing more and count for no share. `trouble`
   * replaces what my row says (`trouble_since` kept while it stays non-null); omitted means `null`.
   */
  heartbeat(relayId: string, options?: { readonly leaving?: boolean } & RelayReport): Promise<Membership>;
  /**
   * Reaps relays whose lease ran out (their partitions become free, each `unclean + 1`), then grants me up to
   * `max` free partitions of the current generation, lowest first, skipping those another acquire is granting
   * now. Grants nothing when I am not alive, am leaving, or grants are not open. Returns the new grants.
   */
  acquire(relayId: string, max: number): Promise<readonly PartitionLease[]>;
  /** Marks my partitions as draining (I will release them once their work ended); returns how many changed. */
  drain(relayId: string, leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[]): Promise<number>;
  /**
   * Frees my partitions for others. Call only once their publishes ended and their writes committed.
   * Returns how many were freed.
   */
  release(relayId: string, leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[]): Promise<number>;
  /**
   * Frees every partition I own and deletes my relays row, as a clean hand-over (no `unclean`). Call once my
   * publishes ended. Returns how many partitions were freed.
   */
  leave(relayId: string): Promise<number>;
  /** Reads my membership without writing anything. */
  membership(relayId: string): Promise<Membership>;
}
