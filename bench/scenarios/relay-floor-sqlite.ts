import type Database from 'better-sqlite3';
import { IDEAL_SQLITE_TABLE_SQL } from '../contenders/ideal-relay-tables.js';
import { benchSqliteFile, sqliteInsertRows, sqlitePending } from '../support/sqlite-bench.js';
import { type FloorContestant, type FloorDatabase, type FloorRun, type FloorSide, urlSide } from './relay-floor-database.js';

const TABLE = 'outbox';
const CHUNK = 200_000;

/**
 * (l) on SQLite: each side on a file of its own (`outboxer migrate` makes outboxer's tables; the ideal's is `outbox`
 * with its primary key only), both in WAL mode; the backlog inserted by plain `INSERT … SELECT` over a recursive
 * series in one `BEGIN IMMEDIATE` transaction (with ANALYZE, as on PostgreSQL) on a connection of the bench's. No
 * wake-up across processes: both relays find the backlog by polling. SQLite runs inside each relay process, so
 * its CPU is in the relay's.
 */
export function sqliteFloor(): FloorDatabase {
  const contestant = (side: FloorSide, run: FloorRun): FloorContestant => {
    const file = benchSqliteFile(side === 'ideal' ? 'outboxer-floor-ideal' : 'outboxer-floor');
    const url = `sqlite:${file.path}`;
    let handle: Database.Database | undefined;
    const db = () => {
      handle ??= file.open();
      return handle;
    };
    return {
      ...urlSide(side, run, url, {
        async createIdealTable() {
          db().pragma('journal_mode = WAL');
          db().exec(IDEAL_SQLITE_TABLE_SQL);
        },
        partitions: async () =>
          db().prepare(`SELECT COUNT(*) AS partitions, COUNT(owner) AS held FROM "${TABLE}_partitions"`).get() as { partitions: number; held: number },
      }),
      async commitBacklog(count, armed) {
        const h = db();
        h.exec('BEGIN IMMEDIATE');
        try {
          for (let from = 0; from < count; from += CHUNK) sqliteInsertRows(h, TABLE, run.workload, from, Math.min(count, from + CHUNK) - 1);
          h.exec(`ANALYZE "${TABLE}"`);
          await armed();
          h.exec('COMMIT');
          return performance.now();
        } catch (error) {
          if (h.inTransaction) h.exec('ROLLBACK');
          throw error;
        }
      },
      async pending() {
        if (side === 'outboxer') return sqlitePending(db(), TABLE);
        return (db().prepare(`SELECT COUNT(*) AS n FROM "${TABLE}"`).get() as { n: number }).n;
      },
      async teardown() {
        handle?.close();
        file.remove();
      },
    };
  };
  return {
    kind: 'sqlite',
    label: 'SQLite',
    cpuParts: [],
    meter: null,
    notes: [
      "SQLite: no wake-up across processes; the database's CPU is inside the relay process's (better-sqlite3 runs SQLite in it), so there is no separate database CPU: relay is the relay and its database together.",
    ],
    contestant,
  };
}
