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
import type { CompiledQuery, QueryResult, RawNode } from 'kysely';
import { OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction, type SqlDialect, type SqlRows, type TransactionStatus } from '../../core/ports/outbox-transaction.js';
import { kyselyDialect, type SelectNoFromCompiler } from './kysely-dialect.js';

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
 * statement commits on its own. A controlled transaction already committed or rolled back is refused by the store;
 * any other transaction is proved open by the store in the database itself, because Kysely's own bookkeeping can
 * say "active" after the database ended the transaction (a raw `COMMIT`, MariaDB's implicit commit before DDL,
 * a deadlock that rolled it back).
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
    async query(sql, params): Promise<SqlRows> {
      let result: QueryResult<unknown>;
      try {
        result = await unplugged.executeQuery(rawQuery(sql, bind(params)));
      } catch (error) {
        throw endedTransaction(error, source) ?? error;
      }
      return { rows: result.rows as Record<string, unknown>[], affectedRows: Number(result.numAffectedRows ?? 0n) };
    },
    ...(controlled === undefined ? {} : { status: () => controlledStatus(controlled) }),
  });
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
  if (typeof candidate.executeQuery !== 'function' || typeof candidate.withoutPlugins !== 'function' || typeof candidate.selectNoFrom !== 'function') {
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

/** The statement as `CompiledQuery.raw(sql, params)` builds it, without loading Kysely at run time. */
function rawQuery(sql: string, parameters: readonly unknown[]): CompiledQuery<unknown> {
  const node: RawNode = Object.freeze({ kind: 'RawNode', sqlFragments: Object.freeze([sql]), parameters: Object.freeze([]) });
  return Object.freeze({ sql, parameters: Object.freeze([...parameters]), query: node, queryId: RAW_QUERY_ID });
}

/** Kysely hands the id only to plugins, which these statements run without. */
const RAW_QUERY_ID = Object.freeze({ queryId: 'outboxer' });
