import { OutboxerError } from '../../core/errors.js';
import { defineTransaction, isOutboxTransaction, type OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { checkDialect } from '../shared/open-transaction.js';
import { mysqlExecutor, type MysqlExecutor, type MysqlQueryable } from './database.js';
import { isOwnOpenTransaction } from './own-transactions.js';

/** What the MariaDB/MySQL store's writer takes: a mysql2 connection inside a transaction, our own `tx`, or an adapter's transaction. */
export type MysqlTransactionInput = MysqlQueryable | MysqlExecutor | OutboxTransaction;

export const MYSQL_FIX =
  'Pass a mysql2 connection after beginTransaction() (const conn = await pool.getConnection(); await conn.beginTransaction()), the tx of ' +
  "outbox.transaction(fromMysqlPool(pool), async (tx) => ...), or your ORM's transaction through its adapter (fromKysely(trx), fromKnex(trx), " +
  'fromDrizzle(tx), fromPrisma(tx), fromTypeOrm(manager), fromMikroOrm(em), fromSequelize(t)).';

/**
 * A mysql2 connection as a transaction handle: rows as plain objects. It vouches for nothing: on MariaDB every writing
 * statement carries its own proof (insert-messages.ts), which a status read a round trip earlier could not match.
 */
export function mysql2Transaction(connection: MysqlQueryable, describe: { readonly source: string; readonly fix: string }): OutboxTransaction<'mysql'> {
  const executor = mysqlExecutor(connection);
  return defineTransaction({ dialect: 'mysql', ...describe, query: (sql, params) => executor.query(sql, params) });
}

/** The caller's handle as a transaction of the port; a pool is refused at once (each statement would commit on its own). */
export function toMysqlTransaction(input: unknown): OutboxTransaction<'mysql'> {
  if (typeof input !== 'object' || input === null || typeof (input as { query?: unknown }).query !== 'function') {
    throw new OutboxerError(
      'OUTBOXER_NOT_IN_TRANSACTION',
      `enqueue was given ${input === null ? 'null' : typeof input} instead of a transaction. ${MYSQL_FIX}`,
    );
  }
  if (isOutboxTransaction(input)) return checkDialect(input, 'mysql');
  if ('getConnection' in input) {
    throw new OutboxerError(
      'OUTBOXER_NOT_IN_TRANSACTION',
      `enqueue was given a connection pool, on which each statement commits on its own: the message would be stored even if your transaction rolled back. ${MYSQL_FIX}`,
    );
  }
  if ('beginTransaction' in input || 'execute' in input)
    return mysql2Transaction(input as unknown as MysqlQueryable, { source: 'a mysql2 connection', fix: MYSQL_FIX });
  const executor = input as MysqlExecutor;
  const own = isOwnOpenTransaction(executor);
  return defineTransaction({
    dialect: 'mysql',
    source: own ? 'the tx of outbox.transaction' : 'a SQL executor',
    fix: MYSQL_FIX,
    query: (sql, params) => executor.query(sql, params),
    // ours while its transaction runs; anything else is probed in the database
    status: () => (isOwnOpenTransaction(executor) ? 'open' : own ? 'closed' : undefined),
  });
}
