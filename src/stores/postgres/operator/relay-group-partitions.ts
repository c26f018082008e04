import type { RelayGroup } from '../../../core/ports.js';
import type { SqlExecutor } from '../database.js';
import { TROUBLE_COLUMNS } from '../engine/engine-relays.js';
import { leaseTables } from '../leases/lease-tables.js';
import { namedStatement, type NamedStatement, runStatement } from '../named-statement.js';
import type { TableName } from '../sql.js';
import { numberOrNull, relayGroupOf, type RelayGroupRow } from '../../shared/relay-group-rows.js';

/**
 * The live relays, each with the partitions it holds, and the partitions no live relay holds, in one statement
 * that writes nothing; the grouping is done by `relayGroupOf`. "Live" is the leases' own definition
 * (`expires_at > now()`, as the membership read and the reap use it), and time left is measured against
 * `clock_timestamp()`, as the heartbeat reports it. Partitions are those of the current generation. A flat read
 * of the small side tables (one row per relay and per partition): nested aggregates over them made the planner,
 * without statistics on the side tables, estimate a cost high enough to JIT-compile a 2 ms query for 0.5 s.
 */
export function relayGroupStatement(name: TableName): NamedStatement {
  const { relays, partitions, partitioning } = leaseTables(name);
  return namedStatement(`SELECT 'relay' AS kind, c.partition_count, r.relay_id, r.name, r.leaving,
        greatest(0, floor(extract(epoch FROM r.expires_at - clock_timestamp()) * 1000)) AS expires_in_ms, NULL::int AS partition,
        ${TROUBLE_COLUMNS}
      FROM ${relays} r CROSS JOIN ${partitioning} c WHERE r.expires_at > now()
    UNION ALL
    SELECT 'partition', c.partition_count, p.owner, NULL, NULL, NULL, p.partition, NULL, NULL
      FROM ${partitions} p JOIN ${partitioning} c ON p.generation = c.generation`);
}

export async function readRelayGroupPartitions(executor: SqlExecutor, statement: NamedStatement, prepare: boolean): Promise<RelayGroup> {
  const rows = (await runStatement(executor, statement, [], prepare)).rows as Record<string, unknown>[];
  return relayGroupOf(
    rows.map((row): RelayGroupRow =>
      row.kind === 'relay'
        ? {
            kind: 'relay',
            partitionCount: Number(row.partition_count),
            relayId: String(row.relay_id),
            name: String(row.name ?? ''),
            leaving: row.leaving === true,
            expiresInMs: Number(row.expires_in_ms),
            trouble: typeof row.trouble === 'string' ? row.trouble : null,
            troubleSinceMs: numberOrNull(row.trouble_since_ms),
          }
        : {
            kind: 'partition',
            partitionCount: Number(row.partition_count),
            owner: typeof row.relay_id === 'string' ? row.relay_id : null,
            partition: Number(row.partition),
          },
    ),
  );
}
