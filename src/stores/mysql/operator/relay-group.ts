import type { RelayGroup } from '../../../core/ports.js';
import { numberOrNull, relayGroupOf, type RelayGroupRow } from '../../shared/relay-group-rows.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';

/**
 * The live relays, each with the partitions it holds (owned or draining), and the partitions no live relay holds,
 * in one statement that writes nothing. "Live" is the leases' definition: `expires_at` after the database's
 * `UTC_TIMESTAMP(6)`. Partitions are those of the current generation. `trouble_since` is UTC, read as epoch ms.
 */
export async function readRelayGroup(executor: MysqlExecutor, names: MysqlTableNames): Promise<RelayGroup> {
  const { rows } = await executor.query(`SELECT 'relay' AS kind, c.partition_count, r.relay_id, r.name, r.leaving,
        GREATEST(0, FLOOR(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), r.expires_at) / 1000)) AS expires_in_ms, NULL AS partition_no,
        t.trouble, FLOOR(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', t.trouble_since) / 1000) AS trouble_since_ms
      FROM ${names.relays} r CROSS JOIN ${names.partitioning} c LEFT JOIN ${names.relayTrouble} t ON t.relay_id = r.relay_id
      WHERE r.expires_at > UTC_TIMESTAMP(6)
    UNION ALL
    SELECT 'partition', c.partition_count, p.owner, NULL, NULL, NULL, p.partition_no, NULL, NULL
      FROM ${names.partitions} p JOIN ${names.partitioning} c ON p.generation = c.generation`);
  return relayGroupOf(
    rows.map((row): RelayGroupRow =>
      row.kind === 'relay'
        ? {
            kind: 'relay',
            partitionCount: Number(row.partition_count),
            relayId: String(row.relay_id),
            name: String(row.name ?? ''),
            leaving: Number(row.leaving) === 1,
            expiresInMs: Number(row.expires_in_ms),
            trouble: typeof row.trouble === 'string' ? row.trouble : null,
            troubleSinceMs: numberOrNull(row.trouble_since_ms),
          }
        : {
            kind: 'partition',
            partitionCount: Number(row.partition_count),
            owner: typeof row.relay_id === 'string' ? row.relay_id : null,
            partition: Number(row.partition_no),
          },
    ),
  );
}
