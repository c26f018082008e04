/**
 * `outboxer/kysely`: a Kysely transaction as the outbox's transaction, on PostgreSQL, MariaDB/MySQL and SQLite.
 *
 * @example
 * await outbox.transaction(() =>
 *   db.transaction().execute(async (trx) => {
 *     await trx.insertInto('orders').values({ id: 7 }).execute();
 *     await outbox.enqueue(fromKysely(trx), { topic: 'orders', type: 'order.created', payload: { id: 7 } });
 *   }),
 * );
 *
 * Kysely is an optional peer dependency: this module imports only its types.
 */
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';
import { OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction, type SqlDialect, type SqlRows, type TransactionStatus } from '../../core/ports/outbox-transaction.js';
import { kyselyDialect, type SelectNoFromCompiler } from './kysely-dialect.js';
import { rawQuery, sqliteTransactionState } from './sqlite-transaction-state.js';

/**
 * What `fromKysely` takes: a Kysely `Transaction` (the `trx` of `db.transaction().execute(...)`) or a
 * `ControlledTransaction` (`await db.startTransaction().execute()`), with or without plugins or `withSchema`.
 * The root `Kysely` instance declares `isTransaction: boolean` where a transaction declares `true`, so
 * `fromKysely(db)` does not compile.
 */
export interface KyselyTransactionLike extends SelectNoFromCompiler {
  readonly isTransaction: true;
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
  withoutPlugins(): KyselyTransactionLike;
  getExecutor(): { provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> };
}

/** A `ControlledTransaction` (Kysely 0.28+) knows whether it was committed or rolled back. */
interface ControlledTransactionLike {
  readonly isCommitted: boolean;
  readonly isRolledBack: boolean;
}

const KYSELY_FIX =
  'Pass the trx of db.transaction().execute(async (trx) => ...) or of await db.startTransaction().execute() while it is open: ' +
  'outbox.enqueue(fromKysely(trx), message).';

/**
 * The caller's Kysely transaction as the outbox's transaction: statements run on the transaction's own connection
 * through Kysely (its plugins left out, so rows keep their column names), on whichever database its dialect speaks.
 *
 * Refused at once (`OUTBOXER_NOT_IN_TRANSACTION`): the root `db` or a `db.connection()` handle, on which each
 * statement commits on its own. A controlled transaction already committed or rolled back is refused by the store.
 * Kysely's own bookkeeping can say "active" after the database ended the transaction (a raw `COMMIT`, MariaDB's
 * implicit commit before DDL, a deadlock that rolled it back), so that word is never taken: on PostgreSQL and MariaDB
 * the store proves the transaction open in the database itself; on SQLite (Kysely's SqliteDialect) SQLite itself is
 * asked on the connection, for the status and again in the tick each vouched statement is sent (`sqliteTransactionState`).
 */
export function fromKysely(trx: KyselyTransactionLike): OutboxTransaction {
  const handle = checkTransaction(trx);
  const controlled = isControlled(handle) ? handle : undefined;
  const source = controlled === undefined ? 'a Kysely transaction' : 'a Kysely controlled transaction';
  const unplugged = handle.withoutPlugins();
  const dialect = dialectOf(handle, unplugged);
  const bind = dialect === 'sqlite' ? sqliteParams : (params: readonly unknown[]) => params;
  return defineTransaction({
    dialect,
    source,
    fix: KYSELY_FIX,
    async query(sql, params, options): Promise<SqlRows> {
      const statement = rawQuery(sql, bind(params));
      let result: QueryResult<unknown>;
      try {
        result = await (options?.vouched === true ? executeVouched(unplugged, dialect, statement, source) : unplugged.executeQuery(statement));
      } catch (error) {
        throw endedTransaction(error, source) ?? error;
      }
      return { rows: result.rows as Record<string, unknown>[], affectedRows: Number(result.numAffectedRows ?? 0n) };
    },
    ...(dialect === 'sqlite'
      ? { status: () => sqliteStatus(unplugged, controlled, source) }
      : controlled === undefined
        ? {}
        : { status: () => controlledStatus(controlled) }),
  });
}

/**
 * A statement the store sends on `status()`'s word `'open'`: SQLite is asked again on the transaction's connection,
 * and the statement handed to it, in one tick (a ROLLBACK queued since the status would otherwise run first).
 */
function executeVouched(trx: KyselyTransactionLike, dialect: SqlDialect, statement: CompiledQuery, source: string): Promise<QueryResult<unknown>> {
  return trx.getExecutor().provideConnection(async (connection) => {
    if (dialect !== 'sqlite' || sqliteTransactionState(connection) !== 'open') {
      throw new OutboxerError(
        'OUTBOXER_NOT_IN_TRANSACTION',
        `enqueue was given ${source} whose connection was no longer inside a transaction when the enqueue's statement was to be sent (an enqueue not awaited before a ROLLBACK?), so nothing was written. ${KYSELY_FIX}`,
      );
    }
    return connection.executeQuery(statement);
  });
}

/** SQLite's own word, asked on the transaction's connection; `'closed'` once Kysely ended the transaction. */
async function sqliteStatus(
  trx: KyselyTransactionLike,
  controlled: ControlledTransactionLike | undefined,
  source: string,
): Promise<TransactionStatus | undefined> {
  if (controlled !== undefined && controlledStatus(controlled) === 'closed') return 'closed';
  try {
    return await trx.getExecutor().provideConnection(async (connection) => sqliteTransactionState(connection));
  } catch (error) {
    if (endedTransaction(error, source) !== undefined) return 'closed';
    throw error;
  }
}

/** A transaction's database, kept while it lives: each enqueue makes its own `fromKysely(trx)`, and compiling costs ~15 µs. */
const dialects = new WeakMap<KyselyTransactionLike, SqlDialect>();

function dialectOf(trx: KyselyTransactionLike, unplugged: KyselyTransactionLike): SqlDialect {
  let dialect = dialects.get(trx);
  if (dialect === undefined) {
    dialect = kyselyDialect(unplugged);
    dialects.set(trx, dialect);
  }
  return dialect;
}

function checkTransaction(trx: unknown): KyselyTransactionLike {
  const candidate = (typeof trx === 'object' && trx !== null ? trx : {}) as Partial<Record<keyof KyselyTransactionLike, unknown>>;
  const methods = [candidate.executeQuery, candidate.withoutPlugins, candidate.selectNoFrom, candidate.getExecutor];
  if (methods.some((method) => typeof method !== 'function')) {
    throw new OutboxerError('OUTBOXER_NOT_IN_TRANSACTION', `fromKysely was given ${describe(trx)}, not a Kysely transaction. ${KYSELY_FIX}`);
  }
  if (candidate.isTransaction !== true) {
    throw new OutboxerError(
      'OUTBOXER_NOT_IN_TRANSACTION',
      'fromKysely was given a Kysely instance that is not a transaction (the root db, or a db.connection() handle), on which each statement ' +
        `commits on its own: the message would be stored even if your transaction rolled back. ${KYSELY_FIX}`,
    );
  }
  return trx as KyselyTransactionLike;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return `an object (${value.constructor?.name ?? 'no class'})`;
}

function isControlled(trx: KyselyTransactionLike): trx is KyselyTransactionLike & ControlledTransactionLike {
  const candidate = trx as Partial<Record<keyof ControlledTransactionLike, unknown>>;
  return typeof candidate.isCommitted === 'boolean' && typeof candidate.isRolledBack === 'boolean';
}

/** Only "ended" is certain: "active" is Kysely's bookkeeping, not the connection's state, so the store proves it. */
function controlledStatus(trx: ControlledTransactionLike): TransactionStatus | undefined {
  return trx.isCommitted || trx.isRolledBack ? 'closed' : undefined;
}

/**
 * Kysely 0.28.11+ refuses a statement on a transaction whose `execute` callback already finished, before sending
 * it; its words are the only sign of that. (Before 0.28.11 the statement ran on the released connection: the
 * store's probe in the database refuses it there.)
 */
const ENDED_TRANSACTION = /^Transaction is already (committed|rolled back)$/;

function endedTransaction(error: unknown, source: string): OutboxerError | undefined {
  if (!(error instanceof Error) || !ENDED_TRANSACTION.test(error.message)) return undefined;
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `enqueue was given ${source} that Kysely says is already ${error.message.endsWith('committed') ? 'committed' : 'rolled back'} ` +
      `(kept after its execute() callback returned), so Kysely sent nothing: the message would not commit or roll back with your transaction. ${KYSELY_FIX}`,
    { cause: error },
  );
}

/** better-sqlite3 binds no booleans: SQLite stores them as 1 and 0. */
function sqliteParams(params: readonly unknown[]): readonly unknown[] {
  return params.some((value) => typeof value === 'boolean') ? params.map((value) => (typeof value === 'boolean' ? Number(value) : value)) : params;
}
