import type { RelayGroup } from '../../../core/ports.js';
import { numberOrNull, relayGroupOf, type RelayGroupRow } from '../../shared/relay-group-rows.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';

/**
 * The live relays (`expires_at` after now on the database clock, the leases' own definition), each with the
 * partitions of the current generation it holds, and the partitions no live relay holds; reads only.
 */
export function readSqliteRelayGroup(database: SqliteDatabase, names: SqliteTableNames): Promise<RelayGroup> {
  const sql = `WITH clock(now) AS (SELECT ${SQLITE_NOW_MS})
    SELECT 'relay' AS kind, c.partition_count, r.relay_id, r.name, r.leaving, max(0, r.expires_at - clock.now) AS expires_in_ms,
        NULL AS partition_no, t.trouble, t.trouble_since
      FROM ${names.relays} r CROSS JOIN ${names.partitioning} c CROSS JOIN clock
        LEFT JOIN ${names.relayTrouble} t ON t.relay_id = r.relay_id
      WHERE r.expires_at > clock.now
    UNION ALL
    SELECT 'partition', c.partition_count, p.owner, NULL, NULL, NULL, p.partition_no, NULL, NULL
      FROM ${names.partitions} p JOIN ${names.partitioning} c ON p.generation = c.generation`;
  return database.read(() =>
    relayGroupOf(
      database.all(sql).map((row): RelayGroupRow =>
        row.kind === 'relay'
          ? {
              kind: 'relay',
              partitionCount: Number(row.partition_count),
              relayId: String(row.relay_id),
              name: String(row.name ?? ''),
              leaving: Number(row.leaving) === 1,
              expiresInMs: Number(row.expires_in_ms),
              trouble: typeof row.trouble === 'string' ? row.trouble : null,
              troubleSinceMs: numberOrNull(row.trouble_since),
            }
          : {
              kind: 'partition',
              partitionCount: Number(row.partition_count),
              owner: typeof row.relay_id === 'string' ? row.relay_id : null,
              partition: Number(row.partition_no),
            },
      ),
    ),
  );
}
