import mysql from 'mysql2/promise';
import type { MysqlPoolLike } from '../../src/stores/mysql/database.js';
import { services } from '../config.js';
import { uniqueName } from './database.js';
import { MESSAGE_TYPE, padOf, type Workload } from './workload.js';

/** The server-level connection (no database chosen) for creating and dropping the contenders' databases. */
async function serverConnection(): Promise<mysql.Connection> {
  return mysql.createConnection({ uri: services.mysqlUrl });
}

/** A MariaDB database of one contender's own (MariaDB's counterpart of a PostgreSQL schema); returns its name. */
export async function createMysqlDatabase(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  const connection = await serverConnection();
  try {
    await connection.query(`CREATE DATABASE \`${name}\``);
  } finally {
    await connection.end();
  }
  return name;
}

export async function dropMysqlDatabase(name: string): Promise<void> {
  const connection = await serverConnection();
  try {
    await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await connection.end();
  }
}

/** The server's URL with `database` as its path: what a client of that database (the CLI's `--database-url`) is given. */
export function mysqlDatabaseUrl(database: string): string {
  const url = new URL(services.mysqlUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A mysql2 pool on `database` as an application makes one: the driver's defaults, `max` connections. */
export function mysqlPool(database: string, max: number): mysql.Pool {
  return mysql.createPool({ uri: mysqlDatabaseUrl(database), connectionLimit: max });
}

/** The structural pool the store takes (mysql2's overloads are wider than it needs). */
export function asPoolLike(pool: mysql.Pool): MysqlPoolLike {
  return pool;
}

/**
 * Adds messages first..first+count-1 as committed rows in chunks of one `INSERT … SELECT` over MariaDB's sequence
 * engine (`seq_<from>_to_<to>`), in message order: plain SQL, the documented producer, with `id`, `headers` and the
 * times from the table's defaults. The body text is byte for byte what the PostgreSQL load's jsonb prints.
 */
export async function mysqlBulkLoad(pool: mysql.Pool, table: string, workload: Workload, first: number, count: number, chunk = 100_000): Promise<void> {
  for (let from = first; from < first + count; from += chunk) {
    await mysqlInsertRows(pool, table, workload, from, Math.min(first + count, from + chunk) - 1);
  }
  await pool.query(`ANALYZE TABLE \`${table}\``);
}

/** One chunk of `mysqlBulkLoad`, messages from..to, on a pool or on a connection inside a transaction of the caller's. */
export async function mysqlInsertRows(db: Pick<mysql.Connection, 'query'>, table: string, workload: Workload, from: number, to: number): Promise<void> {
  await db.query(
    `INSERT INTO \`${table}\` (topic, type, \`key\`, payload)
      SELECT ?, ?, CONCAT('k-', seq % ?), CONCAT('{"n": ', seq, ', "pad": "', REPEAT('x', ?), '"}') FROM seq_${from}_to_${to} ORDER BY seq`,
    [workload.topic, MESSAGE_TYPE, workload.keys, padOf(workload)],
  );
}

export async function mysqlPending(pool: mysql.Pool, table: string): Promise<number> {
  const [rows] = await pool.query(`SELECT COUNT(*) AS n FROM \`${table}\` WHERE state = 'pending'`);
  return Number((rows as { n: unknown }[])[0]?.n ?? Number.NaN);
}

/** The server's version and the settings that decide its commit cost, for the report's conditions. */
export async function mysqlConditions(): Promise<string> {
  const connection = await serverConnection();
  try {
    const [rows] = await connection.query(
      'SELECT VERSION() AS version, @@innodb_flush_log_at_trx_commit AS flush, @@innodb_buffer_pool_size AS pool, @@log_bin AS binlog, @@max_connections AS max',
    );
    const row = (rows as Record<string, unknown>[])[0] ?? {};
    const poolMb = Math.round(Number(row.pool) / 2 ** 20);
    return `${String(row.version)} (innodb_flush_log_at_trx_commit=${String(row.flush)}, innodb_buffer_pool_size=${poolMb} MB, log_bin=${String(row.binlog)}, max_connections=${String(row.max)})`;
  } finally {
    await connection.end();
  }
}
