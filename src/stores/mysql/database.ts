import { withOwnTransaction } from './own-transactions.js';

/**
 * The structural views of `mysql2/promise` the store needs: no runtime import of mysql2 here, so the subpath
 * loads without it and the types do not depend on its version.
 */

/** A `mysql2/promise` Connection, PoolConnection or Pool: `query` resolves to `[rows or result header, fields]`. */
export interface MysqlQueryable {
  query(sql: string | MysqlQueryOptions, values?: unknown): Promise<[unknown, unknown]>;
}

/** The per-query options of mysql2 the store sets, so a pool's own settings never change the rows it reads. */
export interface MysqlQueryOptions {
  readonly sql: string;
  readonly values?: unknown;
  readonly rowsAsArray?: boolean;
  readonly nestTables?: boolean;
  readonly typeCast?: boolean;
}

/** A connection checked out of a `mysql2/promise` pool. */
export interface MysqlPoolConnectionLike extends MysqlQueryable {
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  release(): void;
  destroy?(): void;
}

/** A `mysql2/promise` pool (`mysql.createPool(...)`). */
export interface MysqlPoolLike extends MysqlQueryable {
  getConnection(): Promise<MysqlPoolConnectionLike>;
  end(): Promise<void>;
}

/** A query's outcome: the rows of a SELECT (none for a write) and the rows a write changed. */
export interface MysqlResult {
  readonly rows: readonly Record<string, unknown>[];
  readonly affectedRows: number;
}

/** Runs one statement with `?` placeholders (mysql2 expands an array parameter into a list). */
export interface MysqlExecutor {
  query(sql: string, params?: readonly unknown[]): Promise<MysqlResult>;
}

/** What the store needs from a database: statements, its own short transactions, and one connection kept for a while. */
export interface MysqlDatabase extends MysqlExecutor {
  /** `connection`: the mysql2 connection itself, for work that hands it on (an inbox handler's `tx`). */
  transaction<T>(work: (tx: MysqlExecutor, connection: MysqlQueryable) => Promise<T>): Promise<T>;
  /** Runs `work` on one connection outside a transaction (a `GET_LOCK` taken in it is held until released). */
  session<T>(work: (session: MysqlExecutor) => Promise<T>): Promise<T>;
  /** Ends the pool when the handle owns it (`fromMysqlPool(pool, { ownsPool: true })`); otherwise a no-op. */
  close(): Promise<void>;
  /** The server's address when the pool says it: lets `verify` tell a silent foreign server from an outage. */
  readonly server?: { readonly host: string; readonly port: number };
}

/** Adapts a mysql2 connection (the caller's, inside `beginTransaction`) or pool to the store's executor. */
export function mysqlExecutor(connection: MysqlQueryable): MysqlExecutor {
  return {
    async query(sql, params) {
      // rows as plain objects whatever the pool was configured with (rowsAsArray, nestTables, a typeCast of its own)
      const options: MysqlQueryOptions = {
        sql,
        rowsAsArray: false,
        nestTables: false,
        typeCast: true,
        ...(params === undefined ? {} : { values: [...params] }),
      };
      const [result] = await connection.query(options);
      if (Array.isArray(result)) return { rows: result as Record<string, unknown>[], affectedRows: 0 };
      return { rows: [], affectedRows: Number((result as { affectedRows?: unknown } | null)?.affectedRows ?? 0) };
    },
  };
}

/**
 * Wraps a `mysql2/promise` pool for the store. `ownsPool` makes `close()` end it. A transaction whose rollback
 * fails (the connection was killed) destroys its connection instead of returning it to the pool.
 */
export function fromMysqlPool(pool: MysqlPoolLike, options: { readonly ownsPool?: boolean } = {}): MysqlDatabase {
  const executor = mysqlExecutor(pool);
  const withConnection = async <T>(work: (connection: MysqlPoolConnectionLike) => Promise<T>): Promise<T> => {
    const connection = await pool.getConnection();
    let broken = false;
    try {
      return await work(connection);
    } catch (error) {
      broken = isConnectionLost(error);
      throw error;
    } finally {
      if (broken && connection.destroy !== undefined) connection.destroy();
      else connection.release();
    }
  };
  const server = serverOf(pool);
  return {
    ...(server === undefined ? {} : { server }),
    query: executor.query,
    transaction: (work) =>
      withConnection(async (connection) => {
        await connection.beginTransaction();
        try {
          const tx = mysqlExecutor(connection);
          const result = await withOwnTransaction(tx, () => work(tx, connection));
          await connection.commit();
          return result;
        } catch (error) {
          await connection.rollback().catch(() => undefined);
          throw error;
        }
      }),
    session: (work) => withConnection((connection) => work(mysqlExecutor(connection))),
    async close() {
      if (options.ownsPool === true) await pool.end();
    },
  };
}

/** Whether an error means the connection itself is gone (killed, reset, closed), not just the statement. */
export function isConnectionLost(error: unknown): boolean {
  const e = error as { fatal?: unknown; code?: unknown } | null;
  if (e?.fatal === true) return true;
  return typeof e?.code === 'string' && ['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'EPIPE', 'ER_CONNECTION_KILLED', 'ETIMEDOUT'].includes(e.code);
}

/** The host and port of a mysql2 pool (its core pool's connection config), when it has them. */
function serverOf(pool: MysqlPoolLike): { host: string; port: number } | undefined {
  const config = (pool as { pool?: { config?: { connectionConfig?: { host?: unknown; port?: unknown } } } }).pool?.config?.connectionConfig;
  if (typeof config?.host !== 'string' || typeof config.port !== 'number') return undefined;
  return { host: config.host, port: config.port };
}
