import type { RelayGroup, RelayGroupMember } from '../../../core/ports.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';

/**
 * The live relays, each with the partitions it holds (owned or draining), and the partitions no live relay holds,
 * in one statement that writes nothing. "Live" is the leases' definition: `expires_at` after the database's
 * `UTC_TIMESTAMP(6)`. Partitions are those of the current generation.
 */
export async function readRelayGroup(executor: MysqlExecutor, names: MysqlTableNames): Promise<RelayGroup> {
  const { rows } = await executor.query(`SELECT 'relay' AS kind, c.partition_count, r.relay_id, r.name, r.leaving,
        GREATEST(0, FLOOR(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), r.expires_at) / 1000)) AS expires_in_ms, NULL AS partition_no
      FROM ${names.relays} r CROSS JOIN ${names.partitioning} c WHERE r.expires_at > UTC_TIMESTAMP(6)
    UNION ALL
    SELECT 'partition', c.partition_count, p.owner, NULL, NULL, NULL, p.partition_no
      FROM ${names.partitions} p JOIN ${names.partitioning} c ON p.generation = c.generation`);
  const live = new Map<string, Omit<RelayGroupMember, 'partitions'> & { partitions: number[] }>();
  for (const row of rows) {
    if (row.kind !== 'relay' || typeof row.relay_id !== 'string') continue;
    live.set(row.relay_id, { id: row.relay_id, name: String(row.name ?? ''), leaving: Number(row.leaving) === 1, expiresInMs: Number(row.expires_in_ms), partitions: [] });
  }
  const unowned: number[] = [];
  let partitionCount = 0;
  for (const row of rows) {
    partitionCount = Math.max(partitionCount, Number(row.partition_count ?? 0));
    if (row.kind !== 'partition' || row.partition_no === null) continue;
    const partition = Number(row.partition_no);
    const owner = typeof row.relay_id === 'string' ? live.get(row.relay_id) : undefined;
    if (owner === undefined) unowned.push(partition);
    else owner.partitions.push(partition);
  }
  const byNumber = (a: number, b: number) => a - b;
  const relays = [...live.values()]
    .map((relay) => ({ ...relay, partitions: relay.partitions.sort(byNumber) }))
    .sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1));
  return { partitionCount, relays, unowned: unowned.sort(byNumber) };
}
