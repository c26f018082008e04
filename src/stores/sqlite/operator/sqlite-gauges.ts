import type { OutboxGauges } from '../../../core/ports.js';
import { GAUGE_EXACT_LIMIT } from '../../postgres/gauges-sql.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';

interface GaugesRow {
  pending: number;
  dead: number;
  oldest_pending_age_seconds: number;
}

/**
 * The gauges of a metrics scrape, as on PostgreSQL: the partial indexes `<t>_pending_idx` and `<t>_dead_idx`
 * counted up to GAUGE_EXACT_LIMIT + 1 entries, in index order so the scan stops there, and the oldest pending
 * age from the first entry of the pending index. Above the limit the count is the index's cell count from the
 * `dbstat` table (a walk of its pages without decoding a row: 9 ms for 500,000 entries on a laptop-class core),
 * or, in a SQLite built without `dbstat`, the limit itself ("at least").
 */
export function readSqliteGauges(database: SqliteDatabase, names: SqliteTableNames): Promise<OutboxGauges> {
  const t = names.outbox;
  const capped = (state: string, order: string) =>
    `(SELECT count(*) FROM (SELECT 1 FROM ${t} WHERE state = '${state}' ORDER BY ${order} LIMIT ${GAUGE_EXACT_LIMIT + 1}))`;
  const sql = `SELECT ${capped('pending', 'seq')} AS pending, ${capped('dead', 'dead_at, seq')} AS dead,
      COALESCE((SELECT (${SQLITE_NOW_MS} - created_at) / 1000.0 FROM ${t} WHERE state = 'pending' ORDER BY seq LIMIT 1), 0) AS oldest_pending_age_seconds`;
  return database.read(() => {
    const row = database.get(sql) as unknown as GaugesRow;
    const pending = Number(row.pending);
    const dead = Number(row.dead);
    return {
      pending: pending > GAUGE_EXACT_LIMIT ? indexEntries(database, `${names.table}_pending_idx`) : pending,
      pendingExact: pending <= GAUGE_EXACT_LIMIT,
      dead: dead > GAUGE_EXACT_LIMIT ? indexEntries(database, `${names.table}_dead_idx`) : dead,
      oldestPendingAgeSeconds: Math.max(0, Number(row.oldest_pending_age_seconds)),
    };
  });
}

/** The entries of an index known to hold more than the limit, never below it. */
function indexEntries(database: SqliteDatabase, index: string): number {
  let cells: number;
  try {
    cells = Number(database.get(`SELECT ncell FROM dbstat('main', 1) WHERE name = ?`, [index])?.ncell);
  } catch {
    return GAUGE_EXACT_LIMIT; // no dbstat in this build of SQLite
  }
  return Number.isFinite(cells) ? Math.max(GAUGE_EXACT_LIMIT, cells) : GAUGE_EXACT_LIMIT;
}
