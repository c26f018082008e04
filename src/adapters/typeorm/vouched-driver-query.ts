import type { SqlQueryOptions, SqlRows } from '../../core/ports/outbox-transaction.js';
import { isPgClient, pgClientStatus, type PgClientLike } from '../../stores/postgres/pg-client.js';
import type { TypeOrmDataSourceView, TypeOrmQueryRunnerView } from './typeorm-views.js';

/** A better-sqlite3 Database, as TypeORM's better-sqlite3 driver holds its one connection. */
interface BetterSqliteConnectionLike {
  prepare(sql: string): BetterSqliteStatementLike;
  readonly inTransaction: boolean;
}

interface BetterSqliteStatementLike {
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { readonly changes: number };
}

/**
 * A statement the store sends on `status()`'s word `'open'`, run on the driver connection itself: TypeORM's
 * `queryRunner.query` awaits (its connection, its subscribers) before the driver sees the statement, and a ROLLBACK
 * queued meanwhile would run first, leaving the statement to commit on its own. Here the transaction is checked open
 * in the very tick the driver gets the statement; `refuse` is called (and nothing sent) when it is not.
 */
export type VouchedDriverQuery = (sql: string, params: readonly unknown[], options: SqlQueryOptions | undefined, refuse: () => Error) => Promise<SqlRows>;

/** The runner's transaction as TypeORM counts it: begun, not yet committed or rolled back, runner not released. */
export function isActive(runner: TypeOrmQueryRunnerView): boolean {
  return runner.isTransactionActive && !runner.isReleased;
}

/** The runner's node-postgres client (set once TypeORM connected the runner, which a begun transaction did). */
export function pgClientOf(runner: TypeOrmQueryRunnerView): PgClientLike | undefined {
  const connection = runner.databaseConnection;
  return typeof connection === 'object' && connection !== null && isPgClient(connection) ? connection : undefined;
}

/** The one better-sqlite3 connection TypeORM's better-sqlite3 driver runs every query runner on. */
export function betterSqliteConnectionOf(dataSource: TypeOrmDataSourceView): BetterSqliteConnectionLike | undefined {
  const connection = dataSource.driver?.databaseConnection as Partial<BetterSqliteConnectionLike> | null | undefined;
  return typeof connection?.prepare === 'function' && typeof connection.inTransaction === 'boolean' ? (connection as BetterSqliteConnectionLike) : undefined;
}

export function pgVouchedQuery(runner: TypeOrmQueryRunnerView): VouchedDriverQuery {
  return async (text, params, options, refuse) => {
    const client = pgClientOf(runner);
    // no await from here to client.query: pg queues the statement before any ROLLBACK asked for later
    if (client === undefined || !isActive(runner) || pgClientStatus(client) !== 'open') throw refuse();
    const values = [...params];
    const result = await client.query(options?.name === undefined ? { text, values } : { name: options.name, text, values });
    return { rows: result.rows as Record<string, unknown>[], affectedRows: result.rowCount ?? 0 };
  };
}

/** Prepared statements per connection, by text; bounded, as a connection may outlive many tables. */
const sqliteStatements = new WeakMap<BetterSqliteConnectionLike, Map<string, BetterSqliteStatementLike>>();
const MAX_CACHED_SQLITE_STATEMENTS = 64;

export function betterSqliteVouchedQuery(runner: TypeOrmQueryRunnerView, dataSource: TypeOrmDataSourceView): VouchedDriverQuery {
  // an async function without an await: the check, the statement and its rows all happen in the call itself
  return async (sql, params, _options, refuse) => {
    const connection = betterSqliteConnectionOf(dataSource);
    if (connection === undefined || !isActive(runner) || !connection.inTransaction) throw refuse();
    const statement = sqliteStatement(connection, sql);
    const values = params.map(bindable);
    if (statement.reader) {
      const rows = statement.all(...values) as Record<string, unknown>[];
      return { rows, affectedRows: rows.length };
    }
    return { rows: [], affectedRows: statement.run(...values).changes };
  };
}

function sqliteStatement(connection: BetterSqliteConnectionLike, sql: string): BetterSqliteStatementLike {
  let statements = sqliteStatements.get(connection);
  if (statements === undefined) sqliteStatements.set(connection, (statements = new Map<string, BetterSqliteStatementLike>()));
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = connection.prepare(sql);
    if (statements.size >= MAX_CACHED_SQLITE_STATEMENTS) statements.clear();
    statements.set(sql, statement);
  }
  return statement;
}

/** better-sqlite3 binds no booleans (SQLite stores them as 1 and 0), and only Node Buffers as blobs. */
function bindable(value: unknown): unknown {
  if (typeof value === 'boolean') return Number(value);
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}
