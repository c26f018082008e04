import { isPgClient, pgClientStatus, type PgClientLike } from '../../stores/postgres/pg-client.js';
import type { SqlDialect, SqlQueryOptions, SqlRows, TransactionStatus } from '../../core/ports/outbox-transaction.js';

/**
 * How statements run on the driver connection a Knex transaction holds, per driver. Statements go to the driver
 * itself, not through Knex or `em.execute`: Knex rewrites `?` (so a PostgreSQL `?|` operator or a `?` in a string
 * would break) and expands arrays into lists (so `unnest($1::uuid[])` would get `$1, $2, ...`), and MikroORM's
 * `em.execute` inlines every parameter into the SQL text.
 */
export interface DriverSession<D extends SqlDialect = SqlDialect> {
  readonly dialect: D;
  /** The driver package, for messages. */
  readonly driver: string;
  /** Whether the connection is the one this session speaks to (a connection of another driver is refused). */
  fits(connection: unknown): boolean;
  /** Hands the statement to the driver before it returns (no await first), so a check made just before it still holds. */
  query(connection: unknown, sql: string, params: readonly unknown[], options?: SqlQueryOptions): Promise<SqlRows>;
  /** What the driver itself knows of the connection's transaction, without a round trip (`undefined`: it cannot tell). */
  status(connection: unknown): TransactionStatus | undefined;
}

const pgSession: DriverSession<'postgres'> = {
  dialect: 'postgres',
  driver: 'pg',
  fits: (connection) => typeof connection === 'object' && connection !== null && isPgClient(connection),
  async query(connection, sql, params, options) {
    const client = connection as PgClientLike;
    // pg binds a JS array as a PostgreSQL array, a Uint8Array as bytea and a bigint as its digits
    const values = [...params];
    const result = await client.query(options?.name === undefined ? { text: sql, values } : { name: options.name, text: sql, values });
    return { rows: result.rows as Record<string, unknown>[], affectedRows: result.rowCount ?? 0 };
  },
  status: (connection) => pgClientStatus(connection as PgClientLike),
};

/** A mysql2 Connection of the callback API, as Knex's mysql2 client holds it. */
interface Mysql2ConnectionLike {
  query(options: Mysql2QueryOptions, callback: (error: Error | null, result: unknown) => void): unknown;
}

interface Mysql2QueryOptions {
  readonly sql: string;
  readonly values: unknown[];
  readonly rowsAsArray: false;
  readonly nestTables: false;
  readonly typeCast: true;
}

const mysql2Session: DriverSession<'mysql'> = {
  dialect: 'mysql',
  driver: 'mysql2',
  fits: (connection) =>
    typeof connection === 'object' &&
    connection !== null &&
    typeof (connection as Partial<Mysql2ConnectionLike>).query === 'function' &&
    'threadId' in connection,
  query(connection, sql, params) {
    // rows as plain objects whatever the ORM configured (rowsAsArray, nestTables, a typeCast of its own)
    const options: Mysql2QueryOptions = { sql, values: [...params], rowsAsArray: false, nestTables: false, typeCast: true };
    return new Promise((resolve, reject) => {
      (connection as Mysql2ConnectionLike).query(options, (error, result) => {
        if (error !== null) reject(error);
        else if (Array.isArray(result)) resolve({ rows: result as Record<string, unknown>[], affectedRows: 0 });
        else resolve({ rows: [], affectedRows: Number((result as { affectedRows?: unknown } | null)?.affectedRows ?? 0) });
      });
    });
  },
  // a mysql2 connection keeps no transaction state: the store asks the server (`SELECT @@in_transaction`)
  status: () => undefined,
};

/** A better-sqlite3 Database, as Knex's better-sqlite3 client holds it. */
interface BetterSqliteDatabaseLike {
  prepare(sql: string): {
    readonly reader: boolean;
    all(...params: unknown[]): unknown[];
    run(...params: unknown[]): { readonly changes: number };
  };
  readonly inTransaction: boolean;
}

/** better-sqlite3 binds numbers, bigints, strings, buffers and null only. */
const sqliteValue = (value: unknown): unknown => (typeof value === 'boolean' ? Number(value) : value);

const betterSqliteSession: DriverSession<'sqlite'> = {
  dialect: 'sqlite',
  driver: 'better-sqlite3',
  fits: (connection) =>
    typeof connection === 'object' &&
    connection !== null &&
    typeof (connection as Partial<BetterSqliteDatabaseLike>).prepare === 'function' &&
    typeof (connection as Partial<BetterSqliteDatabaseLike>).inTransaction === 'boolean',
  async query(connection, sql, params) {
    const statement = (connection as BetterSqliteDatabaseLike).prepare(sql);
    const values = params.map(sqliteValue);
    if (statement.reader) {
      const rows = statement.all(...values) as Record<string, unknown>[];
      return { rows, affectedRows: rows.length };
    }
    return { rows: [], affectedRows: statement.run(...values).changes };
  },
  // SQLite's own autocommit flag for the connection: false once BEGIN ran, true again after COMMIT or ROLLBACK
  status: (connection) => ((connection as BetterSqliteDatabaseLike).inTransaction ? 'open' : 'closed'),
};

/** Knex's `client.driverName` of each MikroORM 6 driver this adapter speaks. */
const SESSIONS: Readonly<Record<string, DriverSession>> = {
  pg: pgSession, // @mikro-orm/postgresql
  mysql2: mysql2Session, // @mikro-orm/mysql (MySQL and MariaDB)
  'better-sqlite3': betterSqliteSession, // @mikro-orm/better-sqlite
};

export function driverSession(driverName: string): DriverSession | undefined {
  return Object.hasOwn(SESSIONS, driverName) ? SESSIONS[driverName] : undefined;
}
