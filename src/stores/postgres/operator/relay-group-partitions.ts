import type { RelayGroup } from '../../../core/ports.js';
import type { SqlExecutor } from '../database.js';
import { leaseTables } from '../leases/lease-tables.js';
import { namedStatement, type NamedStatement, runStatement } from '../named-statement.js';
import type { TableName } from '../sql.js';

interface GroupRow {
  partition_count: number;
  relays: { id: string; name: string; leaving: boolean; expiresInMs: number | string; partitions: number[] }[];
  unowned: number[];
}

/**
 * The live relays, each with the partitions it holds, and the partitions no live relay holds, in one statement
 * that writes nothing. "Live" is the leases' own definition (`expires_at > now()`, as the membership read and the
 * reap use it), and time left is measured against `clock_timestamp()`, as the heartbeat reports it. Partitions
 * are those of the current generation. Reads the small side tables only (one row per relay and per partition).
 */
export function relayGroupStatement(name: TableName): NamedStatement {
  const { relays, partitions, partitioning } = leaseTables(name);
  return namedStatement(`WITH live AS (SELECT relay_id, name, leaving, expires_at FROM ${relays} WHERE expires_at > now())
    SELECT c.partition_count,
      (SELECT COALESCE(json_agg(json_build_object(
          'id', r.relay_id, 'name', r.name, 'leaving', r.leaving,
          'expiresInMs', greatest(0, floor(extract(epoch FROM r.expires_at - clock_timestamp()) * 1000)),
          'partitions', (SELECT COALESCE(json_agg(p.partition ORDER BY p.partition), '[]'::json)
            FROM ${partitions} p WHERE p.owner = r.relay_id AND p.generation = c.generation)
        ) ORDER BY r.name, r.relay_id), '[]'::json) FROM live r) AS relays,
      (SELECT COALESCE(array_agg(p.partition ORDER BY p.partition), '{}') FROM ${partitions} p
        WHERE p.generation = c.generation AND (p.owner IS NULL OR p.owner NOT IN (SELECT relay_id FROM live))) AS unowned
    FROM ${partitioning} c`);
}

export async function readRelayGroupPartitions(executor: SqlExecutor, statement: NamedStatement, prepare: boolean): Promise<RelayGroup> {
  const result = await runStatement(executor, statement, [], prepare);
  const row = result.rows[0] as GroupRow | undefined;
  if (row === undefined) return { partitionCount: 0, relays: [], unowned: [] };
  return {
    partitionCount: row.partition_count,
    relays: row.relays.map((relay) => ({
      id: relay.id,
      name: relay.name,
      leaving: relay.leaving,
      expiresInMs: Number(relay.expiresInMs),
      partitions: relay.partitions,
    })),
    unowned: [...row.unowned],
  };
}
