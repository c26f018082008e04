import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { driverSession, type DriverSession } from './driver-sessions.js';
import { isKnexTransaction, transactionConnection, type KnexTransactionLike } from './knex-transaction.js';

/**
 * The parts of a MikroORM 6 EntityManager the adapter reads: `SqlEntityManager` and `EntityManager` of the
 * PostgreSQL, MySQL/MariaDB and better-sqlite drivers all have them. MikroORM gives the global EntityManager
 * (`orm.em`) and the fork of a transaction one type, so the global one is refused at run time, not by the types.
 */
export interface MikroOrmEntityManager {
  isInTransaction(): boolean;
  getTransactionContext(): unknown;
  /** True on `orm.em` only. */
  readonly global?: boolean;
}

const SOURCE = 'a MikroORM EntityManager';

const MIKRO_ORM_FIX =
  'Pass the EntityManager your transaction runs on: await orm.em.transactional(async (em) => outbox.enqueue(fromMikroOrm(em), message)), or a fork after await em.begin().';

const SUPPORTED =
  'fromMikroOrm supports the SQL drivers of MikroORM 6 on PostgreSQL (@mikro-orm/postgresql), MariaDB and MySQL (@mikro-orm/mysql) and SQLite (@mikro-orm/better-sqlite)';

function notInTransaction(why: string): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `fromMikroOrm was given ${why}: the message would not commit or roll back with your transaction, so nothing is written. ${MIKRO_ORM_FIX}`,
  );
}

/**
 * Your MikroORM transaction as the outbox takes it: `outbox.enqueue(fromMikroOrm(em), message)` inside
 * `em.transactional(async (em) => ...)` (or on a fork after `em.begin()`), so the message commits and rolls back
 * with the entities that EntityManager flushes. It binds to the transaction `em` is in when you call it; a nested
 * `em.transactional` (a savepoint) has its own. The global `orm.em`, a fork outside a transaction and one whose
 * transaction already ended are refused at once with `OUTBOXER_NOT_IN_TRANSACTION`.
 */
export function fromMikroOrm(em: MikroOrmEntityManager): OutboxTransaction {
  const transaction = openTransactionOf(em);
  const session = sessionOf(transaction);
  const connection = transactionConnection(transaction);
  const fitting = (candidate: unknown): boolean => candidate !== undefined && session.fits(candidate);
  const statusOn = (held: unknown) => (transaction.isCompleted() ? 'closed' : fitting(held) ? session.status(held) : undefined);
  return defineTransaction({
    dialect: session.dialect,
    source: SOURCE,
    fix: MIKRO_ORM_FIX,
    async query(sql, params, options) {
      const held = await connection.ready;
      if (!fitting(held)) throw unexpectedConnection(session);
      // a statement on the connection after its COMMIT could land outside any transaction, or in the next one
      if (transaction.isCompleted()) throw notInTransaction('an EntityManager whose transaction already committed or rolled back');
      // the store wrote on the driver's word 'open': a ROLLBACK queued since (a raw one Knex did not see) would run first
      if (options?.vouched === true && session.status(held) !== 'open') {
        throw notInTransaction(
          "an EntityManager whose connection was no longer inside its transaction (or about to end it) when the enqueue's statement was to be sent (an enqueue not awaited before a ROLLBACK?)",
        );
      }
      return session.query(held, sql, params, options);
    },
    status() {
      const held = connection.current();
      if (held !== undefined || transaction.isCompleted()) return statusOn(held);
      return connection.ready.then(statusOn, () => undefined);
    },
  });
}

function openTransactionOf(em: MikroOrmEntityManager): KnexTransactionLike {
  if (!isEntityManager(em)) {
    throw notInTransaction(describeNonEntityManager(em));
  }
  if (em.global === true) throw notInTransaction("the global EntityManager (orm.em), not the transaction's own");
  const context = em.isInTransaction() ? em.getTransactionContext() : undefined;
  if (context === undefined || context === null) {
    throw notInTransaction('an EntityManager that is not inside a transaction (a fork or a request context outside em.transactional, or after em.commit())');
  }
  if (!isKnexTransaction(context)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `${SUPPORTED}; this EntityManager's transaction is not one of those drivers' (a MongoDB driver, or MikroORM 7)`,
    );
  }
  if (context.isCompleted()) throw notInTransaction('an EntityManager whose transaction already committed or rolled back');
  return context;
}

function sessionOf(transaction: KnexTransactionLike): DriverSession {
  const driverName = transaction.client.driverName;
  const session = driverSession(driverName);
  if (session !== undefined) return session;
  const hint = driverName === 'mariadb' ? ' (for MariaDB, use @mikro-orm/mysql: it speaks MariaDB through mysql2)' : '';
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `${SUPPORTED}; this EntityManager runs on the ${driverName} driver${hint}`);
}

function unexpectedConnection(session: DriverSession): ConfigurationError {
  return new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `${SUPPORTED}; this EntityManager's transaction holds a connection that is not a ${session.driver} one (a custom Knex client?)`,
  );
}

function isEntityManager(value: unknown): value is MikroOrmEntityManager {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<MikroOrmEntityManager>;
  return typeof candidate.isInTransaction === 'function' && typeof candidate.getTransactionContext === 'function';
}

function describeNonEntityManager(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return `a ${typeof value}`;
  return isEntityManager((value as { em?: unknown }).em) ? 'the MikroORM instance' : 'an object that is not an EntityManager';
}
