import { AsyncLocalStorage } from 'node:async_hooks';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import { SqliteDatabase, type SqliteHandle } from '../../stores/sqlite/database.js';

declare const openBetterSqliteTransaction: unique symbol;

/**
 * The `tx` of `betterSqliteTransaction(db, async (tx) => ...)`: the Drizzle database itself (same tables, same
 * queries, same connection), marked as inside that transaction so `fromDrizzle` takes it and not the root `db`.
 */
export type DrizzleBetterSqliteTransaction<TSchema extends Record<string, unknown> = Record<string, never>> = BetterSQLite3Database<TSchema> & {
  readonly [openBetterSqliteTransaction]: true;
};

/** One transaction (or savepoint) of `betterSqliteTransaction`, while and after it runs. */
export interface BetterSqliteTransactionState {
  readonly connection: SqliteHandle;
  readonly depth: number;
  ended: boolean;
}

const transactions = new WeakMap<object, BetterSqliteTransactionState>();
/** One queue of transactions per connection: SQLite has one transaction per connection, so they take turns. */
const queues = new WeakMap<SqliteHandle, SqliteDatabase>();
/** The transactions the current async call chain runs inside, to refuse a nested call that would wait for its own outer one. */
const enclosing = new AsyncLocalStorage<readonly BetterSqliteTransactionState[]>();

/** The state of a `tx` handed out by `betterSqliteTransaction`, or `undefined` for anything else. */
export function betterSqliteTransactionState(value: unknown): BetterSqliteTransactionState | undefined {
  return typeof value === 'object' && value !== null ? transactions.get(value) : undefined;
}

/**
 * Runs `work` in a transaction on the better-sqlite3 connection of a Drizzle database, for awaited work: Drizzle's
 * own `db.transaction` on better-sqlite3 is synchronous (it commits as soon as the callback returns), so an
 * awaited `outbox.enqueue` cannot run in it. `BEGIN IMMEDIATE` takes the write lock at once (waiting out other
 * connections' writes), COMMIT when `work` resolves, ROLLBACK when it rejects (the rejection is passed on).
 *
 * `tx` is the same Drizzle database, known to be inside this transaction. Given such a `tx` instead of `db`, the
 * work runs in a savepoint of that transaction. Transactions on one connection take turns; while one runs,
 * anything else sent on that connection (through `db` or the driver) runs inside it, as SQLite has one
 * transaction per connection: give other work its own connection.
 */
export async function betterSqliteTransaction<TSchema extends Record<string, unknown>, T>(
  db: BetterSQLite3Database<TSchema>,
  work: (tx: DrizzleBetterSqliteTransaction<TSchema>) => Promise<T>,
): Promise<T> {
  const outer = betterSqliteTransactionState(db);
  if (outer !== undefined) return savepoint(db, outer, work);
  const connection = betterSqliteConnection(db);
  if ((enclosing.getStore() ?? []).some((state) => state.connection === connection && !state.ended)) {
    throw new OutboxerError(
      'OUTBOXER_INVALID_OPTION',
      'betterSqliteTransaction(db, ...) was called inside another betterSqliteTransaction on the same connection: SQLite has one transaction per ' +
        'connection, so it would wait for the outer one forever. Pass the outer tx to nest a savepoint: betterSqliteTransaction(tx, async (inner) => ...)',
    );
  }
  let queue = queues.get(connection);
  if (queue === undefined) queues.set(connection, (queue = new SqliteDatabase(connection)));
  return queue.transaction(() => runInside(db, { connection, depth: 0, ended: false }, work));
}

async function savepoint<TSchema extends Record<string, unknown>, T>(
  tx: BetterSQLite3Database<TSchema>,
  outer: BetterSqliteTransactionState,
  work: (tx: DrizzleBetterSqliteTransaction<TSchema>) => Promise<T>,
): Promise<T> {
  const { connection } = outer;
  if (outer.ended || !connection.inTransaction) {
    throw new OutboxerError(
      'OUTBOXER_NOT_IN_TRANSACTION',
      'betterSqliteTransaction was given a tx whose transaction already ended: nest inside it while it runs',
    );
  }
  const name = `outboxer_savepoint_${outer.depth + 1}`;
  connection.exec(`SAVEPOINT ${name}`);
  let result: T;
  try {
    result = await runInside(tx, { connection, depth: outer.depth + 1, ended: false }, work);
  } catch (error) {
    if (connection.inTransaction) connection.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
    throw error;
  }
  connection.exec(`RELEASE ${name}`);
  return result;
}

async function runInside<TSchema extends Record<string, unknown>, T>(
  db: BetterSQLite3Database<TSchema>,
  state: BetterSqliteTransactionState,
  work: (tx: DrizzleBetterSqliteTransaction<TSchema>) => Promise<T>,
): Promise<T> {
  // the database itself, as its prototype: every query builder and `db.query` reach the same session and connection
  const tx = Object.create(db) as DrizzleBetterSqliteTransaction<TSchema>;
  transactions.set(tx, state);
  try {
    return await enclosing.run([...(enclosing.getStore() ?? []), state], () => work(tx));
  } finally {
    state.ended = true;
  }
}

/** The better-sqlite3 connection under a Drizzle database of the better-sqlite3 driver. */
function betterSqliteConnection(db: unknown): SqliteHandle {
  const session = (db as { session?: { client?: unknown } } | null)?.session;
  const client = session?.client as Partial<SqliteHandle> | undefined;
  if (typeof client?.prepare !== 'function' || typeof client.exec !== 'function' || typeof client.inTransaction !== 'boolean') {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      "betterSqliteTransaction takes a Drizzle database of the better-sqlite3 driver (drizzle(new Database(file)) from 'drizzle-orm/better-sqlite3'); this one is not",
    );
  }
  return client as SqliteHandle;
}
