import { OutboxerError } from '../../core/errors.js';
import { defineTransaction, isOutboxTransaction, type OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { checkDialect, notInTransaction, vouchedOpen } from '../shared/open-transaction.js';
import type { SqliteHandle, SqliteStatementLike } from './database.js';

/** What the SQLite store's writer takes: a better-sqlite3 connection inside BEGIN ... COMMIT, or an adapter's transaction. */
export type SqliteTransactionInput = SqliteHandle | OutboxTransaction;

export const SQLITE_FIX =
  "Run db.exec('BEGIN IMMEDIATE') on the better-sqlite3 connection first, use outbox.transaction(store.database, async (tx) => ...), or pass " +
  "your ORM's transaction through its adapter (fromKysely(trx), fromKnex(trx), fromDrizzle(tx), fromPrisma(tx), fromTypeOrm(manager), fromMikroOrm(em), fromSequelize(t)).";

/** Statements prepared once per connection (a connection's statements die with it). */
const prepared = new WeakMap<SqliteHandle, Map<string, SqliteStatementLike>>();

function statement(db: SqliteHandle, sql: string): SqliteStatementLike {
  let bySql = prepared.get(db);
  if (bySql === undefined) prepared.set(db, (bySql = new Map<string, SqliteStatementLike>()));
  let cached = bySql.get(sql);
  if (cached === undefined) bySql.set(sql, (cached = db.prepare(sql)));
  return cached;
}

export function isBetterSqlite3(value: object): value is SqliteHandle {
  const candidate = value as Partial<SqliteHandle>;
  return typeof candidate.prepare === 'function' && typeof candidate.inTransaction === 'boolean';
}

/** A better-sqlite3 connection as a transaction handle: open exactly while `inTransaction` (SQLite's own autocommit flag). */
export function betterSqlite3Transaction(db: SqliteHandle, describe: { readonly source: string; readonly fix: string }): OutboxTransaction<'sqlite'> {
  return defineTransaction({
    dialect: 'sqlite',
    ...describe,
    query(sql, params, options) {
      // synchronous: nothing can run between this check and the statement
      if (options?.vouched === true && !db.inTransaction) {
        return Promise.reject(notInTransaction(describe, "whose transaction ended before the enqueue's statements ran (an enqueue not awaited?)"));
      }
      const prepared = statement(db, sql);
      if (prepared.reader === true) return Promise.resolve({ rows: prepared.all(...params) as Record<string, unknown>[], affectedRows: 0 });
      return Promise.resolve({ rows: [], affectedRows: prepared.run(...params).changes });
    },
    status: () => (db.inTransaction ? 'open' : 'closed'),
  });
}

export function toSqliteTransaction(input: unknown): OutboxTransaction<'sqlite'> {
  if (typeof input === 'object' && input !== null) {
    if (isOutboxTransaction(input)) return checkDialect(input, 'sqlite');
    if (isBetterSqlite3(input)) return betterSqlite3Transaction(input, { source: 'a better-sqlite3 connection', fix: SQLITE_FIX });
  }
  throw new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `enqueue into SQLite needs a better-sqlite3 connection inside BEGIN ... COMMIT or an adapter's transaction. ${SQLITE_FIX}`,
  );
}

/**
 * Refuses a handle outside a transaction. Where the driver cannot vouch, SQLite says: `BEGIN` fails inside a
 * transaction and succeeds outside one (then rolled back at once, before anything else runs on the handle). Vouched:
 * every statement then carries `vouched`, checked by the driver in the tick it runs. Not vouched, the proof holds for
 * the probe's moment only (SQLite has no in-statement test of autocommit): an adapter that can vouch, should.
 */
export async function proveSqliteTransaction(tx: OutboxTransaction<'sqlite'>): Promise<{ readonly vouched: boolean }> {
  if (await vouchedOpen(tx)) return { vouched: true };
  try {
    await tx.query('BEGIN', []);
  } catch (error) {
    if (/within a transaction/i.test(error instanceof Error ? error.message : '')) return { vouched: false };
    throw error;
  }
  await tx.query('ROLLBACK', []);
  throw notInTransaction(tx, 'outside any transaction (autocommit: each statement would commit on its own)');
}
