import { notMigrated } from '../connection-errors.js';
import type { PgDatabase, SqlExecutor } from '../database.js';
import { leaseTables } from '../leases/lease-tables.js';
import { missingMigrations } from '../migration-runner.js';
import { migrations } from '../migrations.js';
import type { TableName } from '../sql.js';
import { quoteIdentifier } from '../../../core/identifiers.js';
import type { EngineState } from '../../../core/ports/partition-engine.js';

interface StateRow {
  partition_count: number;
  generation: number;
  resize_to: number | null;
}

/** The qualified, quoted outbox table, as `::regclass` takes it. */
export function outboxOf(name: TableName): string {
  return `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
}

/** Reads the partitioning state; `OUTBOXER_NOT_MIGRATED` when a migration is missing. */
export async function readEngineState(database: PgDatabase, name: TableName): Promise<EngineState> {
  const missing = await missingMigrations(database, name, migrations);
  if (missing.length > 0) throw notMigrated(name, `versions ${missing.join(', ')} of ${migrations.length} are missing`);
  return engineStateIn(database, name);
}

/** The state as `executor` sees it; `lock` takes the partitioning row `FOR UPDATE` (inside a transaction). */
export async function engineStateIn(executor: SqlExecutor, name: TableName, lock = false): Promise<EngineState> {
  const result = await executor.query(
    `SELECT c.partition_count, c.generation, c.resize_to FROM ${leaseTables(name).partitioning} c${lock ? ' FOR UPDATE OF c' : ''}`,
  );
  const row = result.rows[0] as StateRow | undefined;
  if (row === undefined) throw notMigrated(name, 'its partitioning row is missing');
  return { partitionCount: row.partition_count, generation: row.generation, resizeTo: row.resize_to };
}

/** Relays whose lease still runs (by `now()`) and the partitions they hold: what a resize waits for. */
export async function liveHolders(executor: SqlExecutor, name: TableName): Promise<{ relays: number; partitions: number }> {
  const { partitions, relays } = leaseTables(name);
  const result = await executor.query(
    `SELECT count(DISTINCT p.owner)::int AS relays, count(*)::int AS partitions
    FROM ${partitions} p JOIN ${relays} r ON r.relay_id = p.owner WHERE r.expires_at > now()`,
  );
  const row = result.rows[0] as { relays: number; partitions: number };
  return { relays: row.relays, partitions: row.partitions };
}
