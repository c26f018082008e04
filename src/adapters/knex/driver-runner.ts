import { ConfigurationError } from '../../core/errors.js';
import type { SqlDialect, SqlQueryOptions, SqlRows, TransactionStatus } from '../../core/ports/outbox-transaction.js';
import { pgClientStatus, type PgClientLike } from '../../stores/postgres/pg-client.js';

/**
 * One statement on the driver connection a Knex transaction holds, past Knex's `raw()` (which rewrites `?` and
 * `??` and expands array bindings), and what the driver itself says of that connection's transaction.
 */
export interface DriverRunner {
  /** Sends the statement to the driver before it returns (no await first), so a check made just before it still holds. */
  run(sql: string, params: readonly unknown[], options: SqlQueryOptions | undefined): Promise<SqlRows>;
  /** The driver's own word on the connection's transaction; `undefined` when it keeps none. */
  transactionStatus(): TransactionStatus | undefined;
}

/** A mysql2 callback Connection, as Knex's 'mysql2' client connects it. */
interface Mysql2ConnectionLike {
  query(
    options: { sql: string; rowsAsArray: boolean; nestTables: boolean; typeCast: boolean },
    values: unknown[],
    callback: (error: Error | null, result: unknown) => void,
  ): unknown;
}

interface BetterSqlite3StatementLike {
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { readonly changes: number };
}

/** A better-sqlite3 Database, as Knex's 'better-sqlite3' client opens it. */
interface BetterSqlite3Like {
  prepare(sql: string): BetterSqlite3StatementLike;
  readonly inTransaction: boolean;
  readonly open: boolean;
}

/** Builds the runner for `dialect` over the connection Knex acquired for the transaction. */
export function driverRunner(dialect: SqlDialect, connection: unknown): DriverRunner {
  const candidate = connection as Record<string, unknown> | null;
  if (dialect === 'postgres' && typeof candidate?.query === 'function') return pgRunner(connection as PgClientLike);
  if (dialect === 'mysql' && typeof candidate?.query === 'function') return mysql2Runner(connection as Mysql2ConnectionLike);
  if (dialect === 'sqlite' && typeof candidate?.prepare === 'function' && typeof candidate.inTransaction === 'boolean') {
    return betterSqlite3Runner(connection as BetterSqlite3Like);
  }
  throw new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `fromKnex: the connection of this Knex transaction is not the driver its client names (a custom Knex client?); use Knex's own 'pg', 'mysql2' or 'better-sqlite3' client`,
  );
}

function pgRunner(client: PgClientLike): DriverRunner {
  return {
    async run(sql, params, options) {
      // node-postgres binds a JS array as a PostgreSQL array ($1::text[]) and keeps a named statement prepared per connection
      const values = [...params];
      const result = await client.query(options?.name === undefined ? { text: sql, values } : { name: options.name, text: sql, values });
      return { rows: result.rows as Record<string, unknown>[], affectedRows: result.rowCount ?? 0 };
    },
    transactionStatus: () => pgClientStatus(client),
  };
}

function mysql2Runner(connection: Mysql2ConnectionLike): DriverRunner {
  return {
    run(sql, params) {
      return new Promise((resolve, reject) => {
        // rows as plain objects whatever the connection was configured with
        const options = { sql, rowsAsArray: false, nestTables: false, typeCast: true };
        connection.query(options, params.map(asBuffer), (error, result) => {
          if (error !== null) reject(error);
          else if (Array.isArray(result)) resolve({ rows: result as Record<string, unknown>[], affectedRows: 0 });
          else resolve({ rows: [], affectedRows: Number((result as { affectedRows?: unknown } | null)?.affectedRows ?? 0) });
        });
      });
    },
    // mysql2 keeps no transaction state: the store asks the server (@@in_transaction)
    transactionStatus: () => undefined,
  };
}

/** Prepared statements per better-sqlite3 connection, by text; bounded, as a connection may outlive many tables. */
const sqliteStatements = new WeakMap<BetterSqlite3Like, Map<string, BetterSqlite3StatementLike>>();
const MAX_CACHED_SQLITE_STATEMENTS = 64;

function sqliteStatement(database: BetterSqlite3Like, sql: string): BetterSqlite3StatementLike {
  let statements = sqliteStatements.get(database);
  if (statements === undefined) sqliteStatements.set(database, (statements = new Map<string, BetterSqlite3StatementLike>()));
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = database.prepare(sql);
    if (statements.size >= MAX_CACHED_SQLITE_STATEMENTS) statements.clear();
    statements.set(sql, statement);
  }
  return statement;
}

function betterSqlite3Runner(database: BetterSqlite3Like): DriverRunner {
  return {
    async run(sql, params) {
      const statement = sqliteStatement(database, sql);
      // better-sqlite3 binds no booleans, and only Node Buffers as blobs
      const values = params.map((value) => (typeof value === 'boolean' ? Number(value) : asBuffer(value)));
      if (statement.reader) {
        const rows = statement.all(...values) as Record<string, unknown>[];
        return { rows, affectedRows: rows.length };
      }
      return { rows: [], affectedRows: statement.run(...values).changes };
    },
    transactionStatus: () => (database.open && database.inTransaction ? 'open' : 'closed'),
  };
}

/** A Uint8Array that is not a Buffer, as a Buffer over the same bytes (drivers bind Buffers as binary); anything else as is. */
function asBuffer(value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
}
