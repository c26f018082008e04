import type { RelayLeases } from '../../src/core/ports.js';

/**
 * What the lease conformance suite needs beyond the port: states that otherwise take a lease's time or an
 * operator's migration. Each database implements these once, so the suite itself holds no SQL. All times are
 * on the database clock.
 */
export interface LeaseControls {
  /** The relay's lease ran out a second ago, as if it had stopped beating; its row and partitions stay as they are. */
  expireRelay(relayId: string): Promise<void>;
  /**
   * Sets the table's engine, as the switch to engine v2 does: `fenceInSeconds` from now (negative: already past)
   * is when grants may start; none given means no fence. `resizeTo` is set as a waiting resize sets it (none: no
   * resize waits).
   */
  configure(config: { readonly resizeTo?: number }): Promise<void>;
  /**
   * Where statements run side by side: locks the relay's row as a reap in progress does, in a transaction of its
   * own, until `end`. `waiting` counts the sessions blocked by that lock. `end({ reap: true })` deletes the relay
   * and frees its partitions, as the reap would, before committing.
   */
  lockRelay?(relayId: string): Promise<RelayLock>;
}

export interface RelayLock {
  waiting(): Promise<number>;
  end(options: { readonly reap: boolean }): Promise<void>;
}

/** One database under the lease conformance suite, freshly migrated. */
export interface LeaseEnvironment {
  /** Runs on a handle that allows several statements at once where the database does (a pool of connections). */
  readonly leases: RelayLeases;
  readonly controls: LeaseControls;
  cleanup(): Promise<void>;
}

export interface LeaseHarness {
  readonly name: string;
  /** Statements run side by side (several connections): the suite adds the races that need `lockRelay`. */
  readonly concurrent: boolean;
  setup(): Promise<LeaseEnvironment>;
}
