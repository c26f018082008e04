import type { OutboxGauges } from '../../../core/ports.js';
import type { MysqlExecutor } from '../database.js';
import { quoteMysql, type MysqlTableNames } from '../table-names.js';
import { secondsSince } from './mysql-time.js';

/** Up to this many pending (or dead) messages are counted exactly; above it they are estimated (PostgreSQL's GAUGE_EXACT_LIMIT). */
export const MYSQL_GAUGE_EXACT_LIMIT = 10_000;

/**
 * The gauges of a metrics scrape in a few index reads, never a count of every row:
 * - `pending` and `dead`: the `(state, seq)` and `(state, dead_at, seq)` indexes counted up to the limit + 1 entries;
 * - above the limit, the optimizer's estimate of that index range (`EXPLAIN`'s `rows`: InnoDB's index dives, a
 *   few pages read), never below the limit. `information_schema.TABLES.TABLE_ROWS` would count every state;
 * - the oldest pending age: the first pending row in store order, as `stats` reads it.
 */
export async function readGauges(executor: MysqlExecutor, names: MysqlTableNames): Promise<OutboxGauges> {
  const t = names.outbox;
  const capped = (state: string, order: string) =>
    `(SELECT COUNT(*) FROM (SELECT 1 FROM ${t} WHERE state = '${state}' ORDER BY ${order} LIMIT ${MYSQL_GAUGE_EXACT_LIMIT + 1}) capped)`;
  const { rows } = await executor.query(`SELECT ${capped('pending', 'seq')} AS pending, ${capped('dead', 'dead_at, seq')} AS dead,
      COALESCE((SELECT ${secondsSince('created_at')} FROM ${t} WHERE state = 'pending' ORDER BY seq LIMIT 1), 0) AS oldest_pending_age_seconds`);
  const row = rows[0] ?? {};
  const pending = Number(row.pending ?? 0);
  const dead = Number(row.dead ?? 0);
  return {
    pending: pending > MYSQL_GAUGE_EXACT_LIMIT ? await estimate(executor, names, 'pending', 'state_idx') : pending,
    pendingExact: pending <= MYSQL_GAUGE_EXACT_LIMIT,
    dead: dead > MYSQL_GAUGE_EXACT_LIMIT ? await estimate(executor, names, 'dead', 'dead_idx') : dead,
    oldestPendingAgeSeconds: Math.max(0, Number(row.oldest_pending_age_seconds ?? 0)),
  };
}

/** The optimizer's row estimate for one state's index range: at least the limit (the count already passed it). */
async function estimate(executor: MysqlExecutor, names: MysqlTableNames, state: 'pending' | 'dead', suffix: string): Promise<number> {
  const index = quoteMysql(`${names.table}_${suffix}`);
  const { rows } = await executor.query(`EXPLAIN SELECT seq FROM ${names.outbox} FORCE INDEX (${index}) WHERE state = '${state}'`);
  const value = Math.round(Number(rows[0]?.rows ?? 0));
  return Number.isFinite(value) ? Math.max(MYSQL_GAUGE_EXACT_LIMIT, value) : MYSQL_GAUGE_EXACT_LIMIT;
}
