import type { OutboxStats } from '../../../core/ports.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';

interface StatsRow {
  pending: number;
  scheduled: number;
  published: number;
  dead: number;
  oldest_pending_age_seconds: number;
}

/**
 * Counts by state (a scan of the table, as on PostgreSQL: for operators, not scrapes) and the oldest pending
 * message's age by the database clock. There are no per-row leases on SQLite, so nothing is ever in flight.
 */
export function readStats(database: SqliteDatabase, names: SqliteTableNames): Promise<OutboxStats> {
  const t = names.outbox;
  const sql = `WITH clock(now) AS (SELECT ${SQLITE_NOW_MS})
    SELECT
      count(*) FILTER (WHERE state = 'pending' AND (due_at IS NULL OR due_at <= clock.now)) AS pending,
      count(*) FILTER (WHERE state = 'pending' AND due_at > clock.now) AS scheduled,
      count(*) FILTER (WHERE state = 'published') AS published,
      count(*) FILTER (WHERE state = 'dead') AS dead,
      COALESCE((SELECT (clock.now - created_at) / 1000.0 FROM ${t} WHERE state = 'pending' ORDER BY seq LIMIT 1), 0) AS oldest_pending_age_seconds
    FROM clock LEFT JOIN ${t} ON true`;
  return database.read(() => {
    const row = database.get(sql) as unknown as StatsRow;
    return {
      pending: Number(row.pending),
      scheduled: Number(row.scheduled),
      published: Number(row.published),
      dead: Number(row.dead),
      oldestPendingAgeSeconds: Math.max(0, Number(row.oldest_pending_age_seconds)),
    };
  });
}
