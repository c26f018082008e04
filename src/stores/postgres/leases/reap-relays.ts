import type { LeaseStatement } from './lease-tables.js';

/**
 * Deletes the relays rows whose lease ran out by `now()` (the start of the acquire's transaction: earlier than
 * the clock at the write, so a reap never comes early). It waits on a row another session has locked: a beat in
 * flight (then re-checks the new expiry and skips a relay that beat in time), or an acquire of that relay
 * (`grantPartitions` locks its own row), whose grants are then committed and seen by `freePartitions`, the next
 * statement of the same transaction. Returns the reaped ids.
 */
export const reapRelays: LeaseStatement<[]> = {
  sql: ({ relays }) => `DELETE FROM ${relays} WHERE expires_at <= now() RETURNING relay_id::text AS relay_id`,
  params: () => [],
};

/** A leaving relay's own row, whether or not its lease still runs. */
export const deleteRelay: LeaseStatement<[relayId: string]> = {
  sql: ({ relays }) => `DELETE FROM ${relays} WHERE relay_id = $1::uuid RETURNING relay_id::text AS relay_id`,
  params: (relayId) => [relayId],
};

/**
 * Frees every partition of relays just deleted, in the same transaction, so no partition ever names a relay
 * without a row (a grant then needs only `owner IS NULL`). It is a statement of its own, not a CTE of the delete:
 * its snapshot is taken after the delete got its row locks, so it sees every grant those relays committed.
 * `unclean` grows by one for a takeover from a dead owner (`$2 = 1`), not for a relay that left cleanly.
 * It waits (never skips) on a partition row locked by the dead owner's own late write, then re-checks the owner.
 */
export const freePartitions: LeaseStatement<[owners: readonly string[], unclean: 0 | 1]> = {
  sql: ({ partitions }) => `UPDATE ${partitions} SET owner = NULL, state = 'free', unclean = unclean + $2::int
    WHERE owner = ANY($1::uuid[])`,
  params: (owners, unclean) => [owners, unclean],
};
