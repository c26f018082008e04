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
  if (bySql === undefined) prepared.set(db, (bySql = new Map()));
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
    query(sql, params) {
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
  throw new OutboxerError('OUTBOXER_NOT_IN_TRANSACTION', `enqueue into SQLite needs a better-sqlite3 connection inside BEGIN ... COMMIT or an adapter's transaction. ${SQLITE_FIX}`);
}

/**
 * Refuses a handle outside a transaction. Where the driver cannot vouch, SQLite says: `BEGIN` fails inside a
 * transaction and succeeds outside one (then rolled back at once, before anything else runs on the handle).
 */
export async function proveSqliteTransaction(tx: OutboxTransaction<'sqlite'>): Promise<void> {
  if (await vouchedOpen(tx)) return;
  try {
    await tx.query('BEGIN', []);
  } catch (error) {
    if (/within a transaction/i.test(error instanceof Error ? error.message : '')) return;
    throw error;
  }
  await tx.query('ROLLBACK', []);
  throw notInTransaction(tx, 'outside any transaction (autocommit: each statement would commit on its own)');
}
