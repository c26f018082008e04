import type { OutboxStats } from '../../../core/ports.js';
import { MYSQL_NOW } from '../migrations.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';
import { secondsSince } from './mysql-time.js';

/**
 * Counts by state in one pass over the table (an operator's request, not a scrape: `gauges` is the cheap read).
 * Due now = `due_at` NULL or past; scheduled = `due_at` in the future (a delay, a backoff, a hold). There are no
 * per-row leases on this engine, so nothing is in flight. The oldest pending age is the first pending row in store
 * order, as PostgreSQL reads it.
 */
export async function readStats(executor: MysqlExecutor, names: MysqlTableNames): Promise<OutboxStats> {
  const t = names.outbox;
  const { rows } = await executor.query(`SELECT
      COALESCE(SUM(state = 'pending' AND (due_at IS NULL OR due_at <= ${MYSQL_NOW})), 0) AS pending,
      COALESCE(SUM(state = 'pending' AND due_at > ${MYSQL_NOW}), 0) AS scheduled,
      COALESCE(SUM(state = 'published'), 0) AS published,
      COALESCE(SUM(state = 'dead'), 0) AS dead,
      COALESCE((SELECT ${secondsSince('created_at')} FROM ${t} WHERE state = 'pending' ORDER BY seq LIMIT 1), 0) AS oldest_pending_age_seconds
    FROM ${t}`);
  const row = rows[0] ?? {};
  return {
    pending: Number(row.pending ?? 0),
    scheduled: Number(row.scheduled ?? 0),
    published: Number(row.published ?? 0),
    dead: Number(row.dead ?? 0),
    oldestPendingAgeSeconds: Math.max(0, Number(row.oldest_pending_age_seconds ?? 0)),
  };
}
