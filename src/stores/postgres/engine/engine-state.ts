import { notMigrated } from '../connection-errors.js';
import type { PgDatabase, SqlExecutor } from '../database.js';
import { leaseTables } from '../leases/lease-tables.js';
import { fenceTriggerNames } from '../migration-engine-switch.js';
import { missingMigrations } from '../migration-runner.js';
import { migrations } from '../migrations.js';
import type { TableName } from '../sql.js';
import { quoteIdentifier } from '../../../core/identifiers.js';

/** The engine configuration of one outbox table, as an operator reads it (`outboxer status`, the switch, a resize). */
export interface EngineState {
  readonly engine: 'v1' | 'v2';
  /** A switch to v2 committed its fence but is still scanning the pending rows: no grant until it ends. */
  readonly switching: boolean;
  /** When v2 grants may start (the last v1 lease at the switch); null under v1 and while `switching`. */
  readonly fenceUntil: Date | null;
  readonly partitionCount: number;
  readonly generation: number;
  /** The count a resize waits to move to (grants closed), or null. */
  readonly resizeTo: number | null;
  /** The last time the fence turned a v1 claim into a no-op: a relay of engine v1 still runs somewhere. */
  readonly lastV1ClaimFencedAt: Date | null;
  /** Whether the fence triggers are on the outbox (they are exactly while the engine is v2). */
  readonly fenced: boolean;
}

interface StateRow {
  engine: 'v1' | 'v2';
  switching: boolean;
  fence_until: Date | string | null;
  partition_count: number;
  generation: number;
  resize_to: number | null;
  v1_fenced_at: Date | string | null;
  fence_triggers: number;
}

const toDate = (value: Date | string | null) => (value === null ? null : new Date(value));

/** The qualified, quoted outbox table, as `::regclass` takes it. */
export function outboxOf(name: TableName): string {
  return `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
}

/** Reads the engine state; `OUTBOXER_NOT_MIGRATED` when a migration it needs (8) is missing. */
export async function readEngineState(database: PgDatabase, name: TableName): Promise<EngineState> {
  const missing = await missingMigrations(database, name, migrations);
  if (missing.length > 0) throw notMigrated(name, `versions ${missing.join(', ')} of ${migrations.length} are missing`);
  return engineStateIn(database, name);
}

/** The state as `executor` sees it; `lock` takes the partitioning row `FOR UPDATE` (inside a transaction). */
export async function engineStateIn(executor: SqlExecutor, name: TableName, lock = false): Promise<EngineState> {
  const result = await executor.query(
    `SELECT c.engine, c.fence_until = 'infinity' AS switching,
      CASE WHEN isfinite(c.fence_until) AND c.engine = 'v2' THEN c.fence_until END AS fence_until,
      c.partition_count, c.generation, c.resize_to, c.v1_fenced_at,
      (SELECT count(*)::int FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = ANY($2::text[])) AS fence_triggers
    FROM ${leaseTables(name).partitioning} c${lock ? ' FOR UPDATE OF c' : ''}`,
    [outboxOf(name), [...fenceTriggerNames(name)]],
  );
  const row = result.rows[0] as StateRow | undefined;
  if (row === undefined) throw notMigrated(name, 'its partitioning row is missing');
  return {
    engine: row.engine,
    switching: row.switching,
    fenceUntil: toDate(row.fence_until),
    partitionCount: row.partition_count,
    generation: row.generation,
    resizeTo: row.resize_to,
    lastV1ClaimFencedAt: toDate(row.v1_fenced_at),
    fenced: row.fence_triggers > 0,
  };
}

/** Relays whose lease still runs (by `now()`) and the partitions they hold: what a resize or a switch back waits for. */
export async function liveHolders(executor: SqlExecutor, name: TableName): Promise<{ relays: number; partitions: number }> {
  const { partitions, relays } = leaseTables(name);
  const result = await executor.query(
    `SELECT count(DISTINCT p.owner)::int AS relays, count(*)::int AS partitions
    FROM ${partitions} p JOIN ${relays} r ON r.relay_id = p.owner WHERE r.expires_at > now()`,
  );
  const row = result.rows[0] as { relays: number; partitions: number };
  return { relays: row.relays, partitions: row.partitions };
}
