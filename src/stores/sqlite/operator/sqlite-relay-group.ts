import type { RelayGroup, RelayGroupMember } from '../../../core/ports.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS, type SqliteTableNames } from '../migrations.js';

/** One row per live relay (`kind = 'relay'`) and one per partition of the current generation (`'partition'`). */
interface GroupRow {
  kind: 'relay' | 'partition';
  partition_count: number;
  relay_id: string | null;
  name: string | null;
  leaving: number | null;
  expires_in_ms: number | null;
  partition_no: number | null;
}

/**
 * The live relays (`expires_at` after now on the database clock, the leases' own definition), each with the
 * partitions of the current generation it holds, and the partitions no live relay holds; reads only.
 */
export function readSqliteRelayGroup(database: SqliteDatabase, names: SqliteTableNames): Promise<RelayGroup> {
  const sql = `WITH clock(now) AS (SELECT ${SQLITE_NOW_MS})
    SELECT 'relay' AS kind, c.partition_count, r.relay_id, r.name, r.leaving, max(0, r.expires_at - clock.now) AS expires_in_ms, NULL AS partition_no
      FROM ${names.relays} r CROSS JOIN ${names.partitioning} c CROSS JOIN clock WHERE r.expires_at > clock.now
    UNION ALL
    SELECT 'partition', c.partition_count, p.owner, NULL, NULL, NULL, p.partition_no
      FROM ${names.partitions} p JOIN ${names.partitioning} c ON p.generation = c.generation`;
  return database.read(() => groupOf(database.all(sql) as unknown as GroupRow[]));
}

function groupOf(rows: readonly GroupRow[]): RelayGroup {
  const live = new Map<string, { id: string; name: string; leaving: boolean; expiresInMs: number; partitions: number[] }>();
  let partitionCount = 0;
  for (const row of rows) {
    partitionCount = Math.max(partitionCount, Number(row.partition_count));
    if (row.kind !== 'relay' || row.relay_id === null) continue;
    live.set(row.relay_id, { id: row.relay_id, name: row.name ?? '', leaving: Number(row.leaving) === 1, expiresInMs: Number(row.expires_in_ms), partitions: [] });
  }
  const unowned: number[] = [];
  for (const row of rows) {
    if (row.kind !== 'partition' || row.partition_no === null) continue;
    const owner = row.relay_id === null ? undefined : live.get(row.relay_id);
    if (owner === undefined) unowned.push(Number(row.partition_no));
    else owner.partitions.push(Number(row.partition_no));
  }
  const byNumber = (a: number, b: number) => a - b;
  const relays: RelayGroupMember[] = [...live.values()]
    .map((relay) => ({ ...relay, partitions: relay.partitions.sort(byNumber) }))
    .sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1));
  return { partitionCount, relays, unowned: unowned.sort(byNumber) };
}
