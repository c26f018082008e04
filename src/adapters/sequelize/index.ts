import type { Transaction } from 'sequelize';
import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction, type TransactionStatus } from '../../core/ports/outbox-transaction.js';
import { connectionRunner, DIALECT_OF_SEQUELIZE } from './connection-runner.js';

/**
 * What `fromSequelize` takes: a Sequelize `Transaction` (the `t` of `sequelize.transaction(async (t) => ...)`, or of
 * `await sequelize.transaction()`). The `Sequelize` instance has no `commit`/`rollback`, so passing it does not compile.
 */
export type SequelizeTransaction = Transaction;

const FIX =
  'Pass the transaction Sequelize gives you, while it is open: await sequelize.transaction(async (t) => { await outbox.enqueue(fromSequelize(t), message); }) (with CLS too: pass t itself).';

/**
 * Sequelize's SQLite dialect runs on node-sqlite3, outboxer's SQLite store on better-sqlite3: each links its own copy
 * of SQLite, and two copies in one process do not see each other's POSIX locks. Both hold the write lock at once, and
 * the file is corrupted (https://www.sqlite.org/howtocorrupt.html, "multiple copies of SQLite linked into the same
 * application"). A store is needed in the process for `outbox.enqueue`, so no arrangement of this pair is safe.
 */
const SQLITE_REFUSAL =
  "fromSequelize does not take Sequelize's sqlite dialect: its driver, sqlite3, links another copy of SQLite than outboxer's SQLite store (better-sqlite3), " +
  "and two copies in one process do not see each other's file locks, so writes through both corrupt the database. Use PostgreSQL or MariaDB/MySQL with Sequelize, " +
  'or for SQLite an ORM whose driver is better-sqlite3 (Knex, Kysely, Drizzle, Prisma, TypeORM, MikroORM).';

/** The store wrote on the driver's word 'open', but a ROLLBACK queued since (a raw one Sequelize did not see) would run first. */
const NO_LONGER_OPEN =
  "a Sequelize transaction whose connection was no longer inside it (or about to end it) when the enqueue's statement was to be sent (an enqueue not awaited before a ROLLBACK?)";

/** The fields of Sequelize 6's `Transaction` the adapter reads; its typings declare none of them. */
interface TransactionFields {
  readonly sequelize: { getDialect(): string };
  readonly id: unknown;
  /** The driver connection, held from BEGIN until the commit or rollback gives it back (a savepoint's is its parent's). */
  readonly connection?: unknown;
  readonly finished?: 'commit' | 'rollback';
  readonly parent?: TransactionFields;
}

/**
 * The caller's Sequelize transaction as outboxer's stores take it: `outbox.enqueue(fromSequelize(t), message)`.
 * Statements run on the transaction's own driver connection (node-postgres, mysql2 or the MariaDB connector) in the
 * database's placeholders, never through `sequelize.query` (whose `bind` rewrites `$n`). They are
 * refused once Sequelize counts the transaction finished, its connection given back, or an outer one finished.
 */
export function fromSequelize(transaction: SequelizeTransaction): OutboxTransaction {
  const fields = transactionFields(transaction);
  const sequelizeDialect = fields.sequelize.getDialect();
  if (sequelizeDialect === 'sqlite') throw new ConfigurationError('OUTBOXER_INVALID_OPTION', SQLITE_REFUSAL);
  const dialect = DIALECT_OF_SEQUELIZE[sequelizeDialect];
  if (dialect === undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `fromSequelize supports Sequelize's postgres (PostgreSQL) and mysql and mariadb (MariaDB/MySQL) dialects; this transaction's Sequelize speaks ${String(sequelizeDialect).slice(0, 40)}`,
    );
  }
  const closed = whyClosed(fields);
  if (closed !== undefined) throw notInTransaction(closed);
  const runner = connectionRunner(sequelizeDialect, fields.connection as object);
  if (runner === undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `fromSequelize found no ${sequelizeDialect} driver connection on this transaction (Sequelize 6 with pg, mysql2 or mariadb)`,
    );
  }
  /** Set when a statement's error says the database itself ended the transaction (a MariaDB deadlock). */
  let ended: string | undefined;
  return defineTransaction({
    dialect,
    source: 'a Sequelize transaction',
    fix: FIX,
    async query(sql, params, options) {
      // checked in the same tick as the driver call: a finished transaction's connection may serve someone else
      const refusal = ended ?? whyClosed(fields) ?? (options?.vouched === true && runner.transactionStatus() !== 'open' ? NO_LONGER_OPEN : undefined);
      if (refusal !== undefined) throw notInTransaction(refusal);
      try {
        return await runner.run(sql, params, options);
      } catch (error) {
        if (runner.endedTransaction(error)) ended = 'a Sequelize transaction the database rolled back (deadlock or lost connection)';
        throw error;
      }
    },
    status(): TransactionStatus | undefined {
      if (ended !== undefined || whyClosed(fields) !== undefined) return 'closed';
      return runner.transactionStatus();
    },
  });
}

/** Why the transaction can take no statement any more, or `undefined` while Sequelize still holds it open. */
function whyClosed(transaction: TransactionFields): string | undefined {
  if (transaction.finished !== undefined) return `a Sequelize transaction after its ${transaction.finished}`;
  const connection = transaction.connection;
  if (typeof connection !== 'object' || connection === null)
    return 'a Sequelize transaction that never began (made with new Transaction, not sequelize.transaction())';
  for (let outer = transaction.parent; outer !== undefined; outer = outer.parent) {
    if (outer.finished !== undefined) return `a nested Sequelize transaction whose outer transaction saw its ${outer.finished}`;
  }
  // Sequelize tags the connection with the transaction's id at BEGIN (a savepoint shares its root's) and clears it
  // when it gives the connection back
  if ((connection as { uuid?: unknown }).uuid !== transaction.id) return 'a Sequelize transaction whose connection went back to the pool';
  return undefined;
}

/** The transaction's fields, or a refusal naming the fix when `value` is the `Sequelize` instance or anything else. */
function transactionFields(value: unknown): TransactionFields {
  const candidate = (typeof value === 'object' || typeof value === 'function') && value !== null ? (value as Record<string, unknown>) : undefined;
  if (candidate !== undefined && isTransaction(candidate)) return candidate as unknown as TransactionFields;
  if (candidate === undefined) throw notInTransaction(`${value === null ? 'null' : typeof value} instead of a transaction`);
  if (typeof candidate.transaction === 'function' && typeof candidate.getDialect === 'function') {
    throw notInTransaction('the Sequelize instance, on which each statement commits on its own');
  }
  if (typeof candidate.transaction === 'object' && candidate.transaction !== null && isTransaction(candidate.transaction as Record<string, unknown>)) {
    throw notInTransaction('query options ({ transaction: t }) instead of the transaction itself (fromSequelize(t))');
  }
  throw notInTransaction('something that is not a Sequelize transaction');
}

function isTransaction(candidate: Record<string, unknown>): boolean {
  const sequelize = candidate.sequelize as { getDialect?: unknown } | null | undefined;
  return (
    typeof candidate.commit === 'function' &&
    typeof candidate.rollback === 'function' &&
    typeof candidate.afterCommit === 'function' &&
    typeof sequelize?.getDialect === 'function'
  );
}

function notInTransaction(what: string): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `fromSequelize was given ${what}: a message written there would not commit or roll back with your transaction, so nothing was written. ${FIX}`,
  );
}
