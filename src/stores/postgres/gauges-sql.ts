import { quoteIdentifier } from '../../core/identifiers.js';
import type { OutboxGauges } from '../../core/ports.js';
import type { SqlExecutor } from './database.js';
import { namedStatement, runStatement, type NamedStatement } from './named-statement.js';
import type { TableName } from './sql.js';

/**
 * Up to this many pending (or dead) messages are counted exactly; above it the count is estimated. Counting
 * 10,001 entries of a partial index takes a few ms; counting a million takes a hundred.
 */
export const GAUGE_EXACT_LIMIT = 10_000;

/**
 * Index entries per 8 KiB page when the index was never vacuumed nor analyzed (its `reltuples` unknown): a
 * btree leaf entry of `(seq)` takes 20 bytes with its line pointer, about 370 to a page filled to 90 %, one of
 * `(dead_at, seq)` 28 bytes, about 260. The estimate is then only as good as that.
 */
const ENTRIES_PER_PAGE_UNANALYZED = Object.freeze({ pending_idx: 370, dead_idx: 260 });

interface GaugesRow {
  pending: number | string;
  pending_estimate: number | string | null;
  dead: number | string;
  dead_estimate: number | string | null;
  oldest_pending_age_seconds: number | string;
}

/**
 * The gauges of a metrics scrape in one statement of a few index reads, never a count of every row:
 * - `pending` and `dead`: the partial indexes `<t>_pending_idx` and `<t>_dead_idx` counted up to
 *   GAUGE_EXACT_LIMIT + 1 entries (a LIMITed subquery); above the limit, the index's size times its density at
 *   the last vacuum or analyze (`reltuples / relpages`, as the planner scales it), never below the limit;
 * - the oldest pending age: the first entry of `<t>_pending_idx` (seq order, as `stats` reads it).
 * Measured on 1M pending rows: docs/metrics.md, "What a scrape costs".
 */
export function gaugesStatement(name: TableName): NamedStatement {
  const s = quoteIdentifier(name.schema);
  const t = `${s}.${quoteIdentifier(name.table)}`;
  // identifiers are validated ([A-Za-z0-9_]), so they can sit in a string literal as they are
  const index = (suffix: string) => `'${s}.${quoteIdentifier(`${name.table}_${suffix}`)}'`;
  // In the order of the state's partial index, so an index scan stops at the limit (a bitmap scan would read
  // the whole index first); a LIMIT the planner cannot see makes it plan for a few rows, even on stale statistics.
  const capped = (state: string, order: string) =>
    `(SELECT count(*) FROM (SELECT 1 FROM ${t} WHERE state = '${state}' ORDER BY ${order} LIMIT (SELECT ${GAUGE_EXACT_LIMIT + 1})) capped)::int`;
  const estimate = (suffix: keyof typeof ENTRIES_PER_PAGE_UNANALYZED) => `(SELECT CASE
        WHEN c.relpages > 0 AND c.reltuples >= 0 THEN c.reltuples / c.relpages
        ELSE ${ENTRIES_PER_PAGE_UNANALYZED[suffix]} END
        * (pg_relation_size(c.oid) / current_setting('block_size')::float8)
      FROM pg_class c WHERE c.oid = to_regclass(${index(suffix)}))`;
  return namedStatement(`SELECT ${capped('pending', 'seq')} AS pending, ${capped('dead', 'dead_at, seq')} AS dead,
      ${estimate('pending_idx')} AS pending_estimate,
      ${estimate('dead_idx')} AS dead_estimate,
      COALESCE((SELECT EXTRACT(EPOCH FROM now() - created_at)::float8 FROM ${t}
        WHERE state = 'pending' ORDER BY seq LIMIT 1), 0) AS oldest_pending_age_seconds`);
}

const statements = new WeakMap<TableName, NamedStatement>();

/** Reads the gauges of `name` (its statement built once per table name and prepared where the driver allows). */
export async function readGauges(executor: SqlExecutor, name: TableName, prepare: boolean): Promise<OutboxGauges> {
  let statement = statements.get(name);
  if (statement === undefined) {
    statement = gaugesStatement(name);
    statements.set(name, statement);
  }
  const row = (await runStatement(executor, statement, [], prepare)).rows[0] as GaugesRow;
  const pending = Number(row.pending);
  const dead = Number(row.dead);
  return {
    pending: pending > GAUGE_EXACT_LIMIT ? aboveLimit(row.pending_estimate) : pending,
    pendingExact: pending <= GAUGE_EXACT_LIMIT,
    dead: dead > GAUGE_EXACT_LIMIT ? aboveLimit(row.dead_estimate) : dead,
    oldestPendingAgeSeconds: Math.max(0, Number(row.oldest_pending_age_seconds)),
  };
}

/** An estimate of a count known to exceed the limit: never below it (a stale or missing estimate says "at least"). */
function aboveLimit(estimate: number | string | null): number {
  const value = Math.round(Number(estimate ?? 0));
  return Number.isFinite(value) ? Math.max(GAUGE_EXACT_LIMIT, value) : GAUGE_EXACT_LIMIT;
}
