import mysql from 'mysql2/promise';
import { fromMysqlPool, type MysqlDatabase, type MysqlExecutor, type MysqlPoolLike } from '../../src/stores/mysql/database.js';
import { services, uniqueName } from './services.js';

/** A MariaDB database of its own for one test: a pool on it, plain SQL, and a cleanup that drops it. */
export interface FreshMysqlDatabase {
  /** The database's name (MariaDB's equivalent of a PostgreSQL schema). */
  readonly name: string;
  /** The test's own pool (4 connections), typed as mysql2's, for enqueues in the caller's transaction. */
  readonly pool: mysql.Pool;
  readonly database: MysqlDatabase;
  /** A URL to the database, for the CLI and child processes. */
  readonly url: string;
  /** Plain SQL outside any transaction (`?` placeholders). */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  /** Ends the pool and drops the database. */
  cleanup(): Promise<void>;
}

/** mysql2 settings every test pool shares: exact 64-bit numbers as text, times as given, several statements never. */
export const testPoolOptions = { connectionLimit: 4, supportBigNumbers: true, bigNumberStrings: true } as const;

/** `timeZone`: every connection of the pool runs `SET time_zone` to it (the store must not depend on the session's zone). */
export async function freshMysqlDatabase(prefix: string, options: { readonly timeZone?: string } = {}): Promise<FreshMysqlDatabase> {
  const name = uniqueName(prefix).slice(0, 60);
  const admin = await mysql.createConnection({ uri: services.mysqlUrl });
  try {
    await admin.query(`CREATE DATABASE \`${name}\``);
  } finally {
    await admin.end();
  }
  const url = new URL(services.mysqlUrl);
  url.pathname = `/${name}`;
  const pool = mysql.createPool({ uri: url.toString(), ...testPoolOptions });
  const timeZone = options.timeZone;
  if (timeZone !== undefined) pool.on('connection', (connection) => void connection.query('SET time_zone = ?', [timeZone]));
  const database = fromMysqlPool(pool as unknown as MysqlPoolLike);
  return {
    name,
    pool,
    database,
    url: url.toString(),
    sql: async (text, params) => (await database.query(text, params)).rows,
    async cleanup() {
      await pool.end();
      const drop = await mysql.createConnection({ uri: services.mysqlUrl });
      try {
        await drop.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await drop.end();
      }
    },
  };
}

/** The real database, with every statement the store sends (directly, in a transaction or a session) pushed to `statements`. */
export function recordingMysqlDatabase(database: MysqlDatabase, statements: string[]): MysqlDatabase {
  const record = (executor: MysqlExecutor): MysqlExecutor => ({
    query: (sql, params) => {
      statements.push(sql);
      return executor.query(sql, params);
    },
  });
  return {
    query: (sql, params) => record(database).query(sql, params),
    transaction: (work) => database.transaction((tx, connection) => work(record(tx), connection)),
    session: (work) => database.session((session) => work(record(session))),
    close: () => database.close(),
  };
}
