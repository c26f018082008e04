import type { SqliteTableNames } from '../table-names.js';

/**
 * The SQL of the SQLite partition leases, one statement per operation. Every statement runs inside one
 * `BEGIN IMMEDIATE` write (or a plain read) and takes the database clock (`now`, integer ms) as a parameter, read
 * once per transaction with `SQLITE_NOW_MS`, so every check of one operation sees the same instant.
 *
 * Fencing needs no row locks here: SQLite has one writer at a time, so a grant, a reap, a release and a fenced
 * completion each see every earlier one committed, and none of them interleaves with another.
 */
export interface SqliteLeaseStatements {
  /** `{ relayId, name, leaseMs, now }`: a new relay incarnation whose lease runs `leaseMs` from now. */
  readonly join: string;
  /** `{ now, leaving, relayId }`: extends a lease still running, never one that ran out. */
  readonly heartbeat: string;
  /** `{ relayId, trouble, now }`: my broker trouble, `trouble_since` kept from the first report while it lasts. */
  readonly reportTrouble: string;
  /** `(relayId)`: my trouble ended. */
  readonly clearTrouble: string;
  /** `()`: the trouble of relays that are gone, deleted with them. */
  readonly forgetTrouble: string;
  /** `(now)`: deletes every relay whose lease ran out; returns their ids. */
  readonly reap: string;
  /** `(relayId)`: a leaving relay's own row, whether or not its lease still runs. */
  readonly deleteRelay: string;
  /** `(unclean, owners as a JSON array)`: frees every partition of relays just deleted, in the same write. */
  readonly freePartitions: string;
  /**
   * `{ relayId, now, max }`: up to `max` free partitions of the current generation, lowest
   * first, each epoch raised by one; nothing unless I am alive and not leaving and grants are open.
   */
  readonly grant: string;
  /** `(partition, epoch, relayId)`: marks one of my partitions draining, only while it names me at that epoch. */
  readonly drain: string;
  /** `(partition, epoch, relayId)`: frees one of my partitions, owned or draining, only at that epoch. */
  readonly release: string;
}

export function sqliteLeaseStatements({ relays, partitions, partitioning, relayTrouble }: SqliteTableNames): SqliteLeaseStatements {
  const mine = 'partition_no = ? AND epoch = CAST(? AS INTEGER) AND owner = ?';
  return Object.freeze({
    join: `INSERT INTO ${relays} (relay_id, name, lease_ms, joined_at, heartbeat_at, expires_at)
      VALUES (@relayId, @name, @leaseMs, @now, @now, @now + @leaseMs)`,
    heartbeat: `UPDATE ${relays} SET heartbeat_at = @now, expires_at = @now + lease_ms, leaving = (leaving OR @leaving)
      WHERE relay_id = @relayId AND expires_at > @now`,
    reportTrouble: `INSERT INTO ${relayTrouble} (relay_id, trouble, trouble_since) VALUES (@relayId, @trouble, @now)
      ON CONFLICT (relay_id) DO UPDATE SET trouble = excluded.trouble`,
    clearTrouble: `DELETE FROM ${relayTrouble} WHERE relay_id = ?`,
    forgetTrouble: `DELETE FROM ${relayTrouble} WHERE relay_id NOT IN (SELECT relay_id FROM ${relays})`,
    reap: `DELETE FROM ${relays} WHERE expires_at <= ? RETURNING relay_id`,
    deleteRelay: `DELETE FROM ${relays} WHERE relay_id = ? RETURNING relay_id`,
    freePartitions: `UPDATE ${partitions} SET owner = NULL, state = 'free', unclean = unclean + ?
      WHERE owner IN (SELECT value FROM json_each(?))`,
    grant: `UPDATE ${partitions} SET owner = @relayId, state = 'owned', epoch = epoch + 1, granted_at = @now
      WHERE partition_no IN (
        SELECT p.partition_no FROM ${partitions} p, ${partitioning} c
        WHERE p.owner IS NULL AND p.generation = c.generation
          AND c.resize_to IS NULL
          AND EXISTS (SELECT 1 FROM ${relays} r WHERE r.relay_id = @relayId AND r.expires_at > @now AND NOT r.leaving)
        ORDER BY p.partition_no LIMIT @max)
      RETURNING partition_no AS partition, CAST(epoch AS TEXT) AS epoch, unclean`,
    drain: `UPDATE ${partitions} SET state = 'draining' WHERE ${mine} AND state = 'owned'`,
    release: `UPDATE ${partitions} SET owner = NULL, state = 'free' WHERE ${mine}`,
  });
}
