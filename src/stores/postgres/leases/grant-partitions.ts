import type { LeaseStatement } from './lease-tables.js';

/**
 * Grants up to `$2` free partitions to relay `$1`, lowest first, each with its epoch raised by one.
 *
 * - The grantee must be alive (by `clock_timestamp()`) and not leaving, and its row is locked `FOR KEY SHARE`
 *   until the grant commits: a reap of it waits for that, so the reap's `freePartitions` sees these grants;
 *   or the reap came first and the lock finds no row, so nothing is granted. Heartbeats (no key change) do not
 *   conflict with that lock.
 * - Only `owner IS NULL` is grantable: the reap has already freed dead owners' partitions. The condition is on
 *   the partition row itself, so when another acquire granted it after this statement's snapshot, the row lock
 *   re-checks the new version and drops it. A test of "owner has no relays row" would read the snapshot
 *   instead, and a relay that joined after it would look dead: its fresh grant could be taken twice.
 * - `SKIP LOCKED` passes over partitions that another acquire, a release or a fenced write holds right now.
 * - Nothing is granted while a resize waits (`resize_to` set: relays give everything back, see
 *   `resize-partitions.ts`), or from another generation.
 */
export const grantPartitions: LeaseStatement<[relayId: string, max: number]> = {
  sql: ({ relays, partitions, partitioning }) => `WITH me AS (
      SELECT relay_id FROM ${relays}
      WHERE relay_id = $1::uuid AND expires_at > clock_timestamp() AND NOT leaving
      FOR KEY SHARE
    ), pick AS (
      SELECT p.partition FROM ${partitions} p, ${partitioning} c
      WHERE p.owner IS NULL AND p.generation = c.generation
        AND c.resize_to IS NULL AND EXISTS (SELECT 1 FROM me)
      ORDER BY p.partition LIMIT $2::int
      FOR UPDATE OF p SKIP LOCKED
    )
    UPDATE ${partitions} p SET owner = $1::uuid, state = 'owned', epoch = p.epoch + 1, granted_at = now()
    FROM pick WHERE p.partition = pick.partition
    RETURNING p.partition, p.epoch::text AS epoch, p.unclean`,
  params: (relayId, max) => [relayId, max],
};
