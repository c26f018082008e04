import type { DeadMessage } from '../message.js';

export interface OutboxStats {
  /** Ready to publish now. */
  readonly pending: number;
  /** Waiting for their available time (delayed or backing off after a failure). */
  readonly scheduled: number;
  /** Leased by a relay of an older version (engine v1, per-row leases) right now; 0 once only this version's relays run. */
  readonly inFlight: number;
  /** Published and still retained (0 when published rows are deleted at once). */
  readonly published: number;
  readonly dead: number;
  /** Age in seconds of the oldest message not yet published or dead, by the database clock; 0 if none. */
  readonly oldestPendingAgeSeconds: number;
}

/**
 * The operator role: what `outboxer status` and `outboxer dead` need from a store.
 *
 * Contract:
 * - `stats` and `listDead` read and never write.
 * - Dead messages leave the relay's reach until an operator acts. `retryDead` gives them back as pending
 *   with fresh attempts, keeping their place in store order; `purgeDead` deletes them. Both touch only
 *   messages that are dead, so repeating a call changes nothing more, and both return how many they changed.
 */
export interface OutboxOperator {
  stats(): Promise<OutboxStats>;
  /** At most `limit` dead messages, in the order they died, each with the reason it was parked. */
  listDead(limit: number): Promise<DeadMessage[]>;
  /** Moves dead messages back to pending with fresh attempts; `'all'` for every one (in bounded batches). */
  retryDead(ids: readonly string[] | 'all'): Promise<number>;
  /** Deletes dead messages; `'all'` for every one. */
  purgeDead(ids: readonly string[] | 'all'): Promise<number>;
}
