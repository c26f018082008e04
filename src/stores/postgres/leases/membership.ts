import type { LeaseStatement, LeaseTables } from './lease-tables.js';

/**
 * The membership read, one row, shared by the heartbeat and the plain read. `live` is a CTE of the relays whose
 * lease runs past `now()` (the statement's start): with their id, name, leaving flag and expiry. Time left is
 * measured against `clock_timestamp()`, so it never exceeds the lease.
 * `grantable` counts free partitions of the current generation and those whose owner is no longer live
 * (an acquire reaps that owner first). Grants are closed while a resize waits (`resize_to`). Epochs travel as text: a bigint may not fit a JSON number.
 */
function membershipSelect({ partitions, partitioning }: LeaseTables, alive: string): string {
  return `SELECT ${alive} AS alive,
    (SELECT COALESCE(json_agg(json_build_object(
        'id', r.relay_id, 'name', r.name, 'leaving', r.leaving, 'trouble', r.trouble,
        'held', (SELECT count(*) FROM ${partitions} p WHERE p.owner = r.relay_id),
        'expiresInMs', greatest(0, floor(extract(epoch FROM r.expires_at - clock_timestamp()) * 1000))) ORDER BY r.relay_id), '[]'::json)
      FROM live r) AS relays,
    (SELECT COALESCE(json_agg(json_build_object(
        'partition', p.partition, 'epoch', p.epoch::text, 'state', p.state, 'unclean', p.unclean) ORDER BY p.partition), '[]'::json)
      FROM ${partitions} p WHERE p.owner = $1::uuid) AS owned,
    (SELECT count(*)::int FROM ${partitions} p
      WHERE p.generation = c.generation AND (p.owner IS NULL OR p.owner NOT IN (SELECT relay_id FROM live))) AS grantable,
    c.partition_count, c.generation, c.resize_to, c.resize_to IS NULL AS grants_open
  FROM ${partitioning} c`;
}

/** Reads without writing: for status, and for a relay that wants to look before it acts. */
export const readMembership: LeaseStatement<[relayId: string]> = {
  sql: (tables) => `WITH live AS (
      SELECT relay_id, name, leaving, expires_at, trouble FROM ${tables.relays} WHERE expires_at > now())
    ${membershipSelect(tables, 'EXISTS (SELECT 1 FROM live WHERE relay_id = $1::uuid)')}`,
  params: (relayId) => [relayId],
};

/**
 * The heartbeat: one statement per beat (an idle relay's only regular write). It extends my lease only while it
 * still runs by `clock_timestamp()` (the time of the write itself, later than `now()`, so a beat never revives a
 * lease that ran out while it waited). A reap that deletes my row first leaves nothing to update; a reap that
 * comes second re-checks my new expiry on the row lock and skips me: either way I am told the truth in `alive`.
 * Only my own row is written; `heartbeat_at` and `expires_at` are not indexed, so the update stays HOT.
 * The membership merges my new row (the CTE's) with the others as the statement's snapshot shows them.
 */
export const heartbeat: LeaseStatement<[relayId: string, leaving: boolean, trouble: string | null]> = {
  sql: (tables) => `WITH beat AS (
      UPDATE ${tables.relays} SET heartbeat_at = clock_timestamp(),
        expires_at = clock_timestamp() + lease_ms * interval '1 millisecond', leaving = leaving OR $2::boolean,
        trouble = $3::text,
        trouble_since = CASE WHEN $3::text IS NULL THEN NULL ELSE COALESCE(trouble_since, clock_timestamp()) END
      WHERE relay_id = $1::uuid AND expires_at > clock_timestamp()
      RETURNING relay_id, name, leaving, expires_at, trouble
    ), live AS (
      SELECT * FROM beat
      UNION ALL
      SELECT relay_id, name, leaving, expires_at, trouble FROM ${tables.relays} WHERE expires_at > now() AND relay_id <> $1::uuid)
    ${membershipSelect(tables, 'EXISTS (SELECT 1 FROM beat)')}`,
  params: (relayId, leaving, trouble) => [relayId, leaving, trouble],
};
