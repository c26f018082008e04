import mysql from 'mysql2/promise';
import { services } from '../config.js';
import { IDEAL_MARIADB_TABLE_SQL } from '../contenders/ideal-relay-tables.js';
import { localPortsOf, pidOf, processCpu } from '../measure/process-cpu.js';
import { createMysqlDatabase, dropMysqlDatabase, mysqlDatabaseUrl, mysqlInsertRows, mysqlPending, mysqlPool } from '../support/mysql-bench.js';
import { type DatabaseCpuMeter, type FloorContestant, type FloorDatabase, type FloorRun, type FloorSide, urlSide } from './relay-floor-database.js';

const TABLE = 'outbox';
const CHUNK = 100_000;
const PREFIX = 'bench_floor';

/** Server-wide status counters read around a drain: statements received, and the storage engine's row operations. */
const COUNTERS: Record<string, string> = {
  statements: 'Questions',
  indexLookups: 'Handler_read_key',
  indexNextRows: 'Handler_read_next',
  rowsDeleted: 'Handler_delete',
  rowsUpdated: 'Handler_update',
};

async function readCounters(connection: mysql.Connection): Promise<Record<string, number>> {
  const [rows] = await connection.query(
    `SHOW GLOBAL STATUS WHERE Variable_name IN (${Object.values(COUNTERS)
      .map(() => '?')
      .join(', ')})`,
    Object.values(COUNTERS),
  );
  const values = new Map((rows as { Variable_name: string; Value: string }[]).map((row) => [row.Variable_name, Number(row.Value)]));
  return Object.fromEntries(Object.entries(COUNTERS).map(([name, variable]) => [name, values.get(variable) ?? Number.NaN]));
}

/**
 * mariadbd's CPU (all its threads, from /proc) over a drain, nothing left out: the server is one process, and
 * others' sessions on it count too; `otherSessions` counts the connections it serves besides the relay's (by
 * client port) and the bench's (its `bench_floor…` databases) at the end. The status counters (COUNTERS) are
 * server-wide too, the bench's own few reads included.
 */
async function mariadbMeter(): Promise<DatabaseCpuMeter | null> {
  const pid = pidOf('mariadbd') ?? pidOf('mysqld');
  if (pid === undefined) return null;
  let before = Number.NaN;
  let countersBefore: Record<string, number> = {};
  return {
    async start() {
      const connection = await mysql.createConnection({ uri: services.mysqlUrl });
      try {
        countersBefore = await readCounters(connection);
      } finally {
        await connection.end();
      }
      before = processCpu(pid);
    },
    async stop(relayPid) {
      const mariadbd = processCpu(pid) - before;
      const ports = localPortsOf(relayPid);
      const connection = await mysql.createConnection({ uri: services.mysqlUrl });
      try {
        const countersAfter = await readCounters(connection);
        const counts = Object.fromEntries(Object.entries(countersAfter).map(([name, value]) => [name, value - (countersBefore[name] ?? Number.NaN)]));
        const [rows] = await connection.query(
          `SELECT HOST AS host, DB AS db FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND USER <> 'system user' AND COMMAND <> 'Daemon'`,
        );
        const others = (rows as { host: string | null; db: string | null }[]).filter(
          ({ host, db }) => !ports.has(Number(host?.split(':').pop())) && !(db ?? '').startsWith(PREFIX),
        );
        return { parts: { mariadbd }, otherSessions: others.length, counts };
      } finally {
        await connection.end();
      }
    },
  };
}

/**
 * (l) on MariaDB: each side in a database of its own (`outboxer migrate` makes outboxer's tables; the ideal's is
 * `outbox` with its primary key only), the backlog inserted by plain `INSERT … SELECT` over the sequence engine in
 * one transaction on a connection of the bench's. No wake-up: MariaDB has no NOTIFY, so both relays find the
 * backlog by polling (the ideal every 250 ms, outboxer at its idle back-off, 250 ms doubling up to 2 s).
 */
export async function mariadbFloor(): Promise<FloorDatabase> {
  const meter = await mariadbMeter();
  const contestant = (side: FloorSide, run: FloorRun): FloorContestant => {
    let database: string | undefined;
    let pool: mysql.Pool | undefined;
    const ready = () => {
      if (database === undefined || pool === undefined) throw new Error('(l) MariaDB: setup() has not run');
      return { database, pool, url: mysqlDatabaseUrl(database) };
    };
    const sides = () => {
      const { url, pool: db } = ready();
      return urlSide(side, run, url, {
        createIdealTable: async () => void (await db.query(IDEAL_MARIADB_TABLE_SQL)),
        async partitions() {
          const [rows] = await db.query(`SELECT COUNT(*) AS partitions, COUNT(owner) AS held FROM \`${TABLE}_partitions\``);
          const row = (rows as { partitions: number; held: number }[])[0];
          return { partitions: Number(row?.partitions ?? 0), held: Number(row?.held ?? 0) };
        },
      });
    };
    return {
      async setup() {
        database = await createMysqlDatabase(side === 'ideal' ? `${PREFIX}_ideal` : PREFIX);
        pool = mysqlPool(database, 2);
        await sides().setup();
      },
      start: () => sides().start(),
      async commitBacklog(count, armed) {
        const connection = await ready().pool.getConnection();
        try {
          await connection.beginTransaction();
          try {
            for (let from = 0; from < count; from += CHUNK) await mysqlInsertRows(connection, TABLE, run.workload, from, Math.min(count, from + CHUNK) - 1);
            await armed();
            await connection.commit();
            return performance.now();
          } catch (error) {
            await connection.rollback().catch(() => undefined);
            throw error;
          }
        } finally {
          connection.release();
        }
      },
      async pending() {
        const { pool: db } = ready();
        if (side === 'outboxer') return mysqlPending(db, TABLE);
        const [rows] = await db.query(`SELECT COUNT(*) AS n FROM \`${TABLE}\``);
        return Number((rows as { n: unknown }[])[0]?.n ?? Number.NaN);
      },
      async teardown() {
        await pool?.end();
        if (database !== undefined) await dropMysqlDatabase(database);
      },
    };
  };
  return {
    kind: 'mariadb',
    label: 'MariaDB',
    cpuParts: ['mariadbd'],
    meter,
    notes: [
      ...(meter === null ? ['MariaDB runs out of sight of /proc here: its CPU is not measured.'] : []),
      "MariaDB: no wake-up (no NOTIFY); the rows are loaded without ANALYZE TABLE (it would commit the load's transaction). mariadbd = the whole server process (all threads) from /proc, less nothing: others' sessions on the shared server count in it (otherSessions: the connections seen at the end besides the relay's and the bench's). statementsPer1kMsg, indexLookupsPer1kMsg, indexNextRowsPer1kMsg, rowsDeletedPer1kMsg, rowsUpdatedPer1kMsg: server-wide SHOW GLOBAL STATUS deltas (Questions, Handler_read_key, Handler_read_next, Handler_delete, Handler_update) over the same window, per 1,000 messages.",
    ],
    contestant,
  };
}
