/**
 * `outboxer/typeorm`: a TypeORM transaction as the outbox's transaction, on PostgreSQL, MariaDB/MySQL and SQLite.
 *
 * @example
 * await outbox.transaction(() =>
 *   dataSource.transaction(async (manager) => {
 *     await manager.insert(Order, { id: 7 });
 *     await outbox.enqueue(fromTypeOrm(manager), { topic: 'orders', type: 'order.created', payload: { id: 7 } });
 *   }),
 * );
 *
 * TypeORM is an optional peer dependency: this module imports only its types.
 */
import type { EntityManager } from 'typeorm';
import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import {
  defineTransaction,
  type OutboxTransaction,
  type OutboxTransactionSpec,
  type SqlDialect,
  type TransactionStatus,
} from '../../core/ports/outbox-transaction.js';
import { mysqlExecutor } from '../../stores/mysql/database.js';
import { pgClientStatus } from '../../stores/postgres/pg-client.js';
import { isMysqlCallbackConnection, type TypeOrmDataSourceView, type TypeOrmManagerView, type TypeOrmQueryRunnerView } from './typeorm-views.js';
import { betterSqliteConnectionOf, betterSqliteVouchedQuery, isActive, pgClientOf, pgVouchedQuery, type VouchedDriverQuery } from './vouched-driver-query.js';

/** The TypeORM database types this adapter speaks, each with the dialect of the store that takes it. */
const DIALECT_OF_TYPE: Readonly<Record<string, SqlDialect>> = {
  postgres: 'postgres',
  mysql: 'mysql',
  mariadb: 'mysql',
  'better-sqlite3': 'sqlite',
};

const SOURCE = 'a TypeORM EntityManager';

/** How to pass an open transaction with TypeORM: shown in every `OUTBOXER_NOT_IN_TRANSACTION` about this adapter. */
export const TYPEORM_FIX =
  'Pass the manager of an open TypeORM transaction: dataSource.transaction(async (manager) => outbox.enqueue(fromTypeOrm(manager), message)), ' +
  'or queryRunner.manager after await queryRunner.startTransaction().';

/**
 * The caller's open TypeORM transaction as outboxer's stores take it: `manager` is the `EntityManager` that
 * `dataSource.transaction(async (manager) => ...)` gives its callback (or `queryRunner.manager` after
 * `queryRunner.startTransaction()`). Works on PostgreSQL (`type: 'postgres'`), MariaDB/MySQL (`'mariadb'`,
 * `'mysql'`) and SQLite (`'better-sqlite3'`); statements run on the transaction's own connection.
 *
 * Refused at once with `OUTBOXER_NOT_IN_TRANSACTION`: a `DataSource` (also a type error), the root
 * `dataSource.manager` (TypeORM types it as a transaction's manager, so only at run time), and the manager of a
 * transaction that has ended. Every statement checks again, through `status()`:
 * - PostgreSQL: TypeORM's transaction flag, then pg's own status of the connection (`'T'` open, `'E'` failed) when
 *   no statement is under way on it (otherwise the store asks the database);
 * - MariaDB/MySQL: TypeORM's flag says only `'closed'`; when it says active the store asks the server
 *   (`@@in_transaction`), as a DDL statement or a `COMMIT` run through `manager.query` ends it unseen by TypeORM;
 * - SQLite: TypeORM's flag, then better-sqlite3's `inTransaction` of the driver's one connection.
 * Where `status()` vouched (`'open'`), each statement goes to the driver connection itself, after the same check
 * made in the tick the driver gets it: TypeORM's runner awaits before sending, time enough for a ROLLBACK to go first.
 */
export function fromTypeOrm(manager: EntityManager): OutboxTransaction {
  const handle: unknown = manager;
  const mistake = notAManager(handle);
  if (mistake !== undefined) throw notInTransaction(mistake);
  const view = handle as TypeOrmManagerView;
  const dataSource = (view.dataSource ?? view.connection) as TypeOrmDataSourceView;
  const dialect = dialectOf(dataSource.options.type);
  const runner = view.queryRunner;
  if (runner === undefined) throw notInTransaction('the root EntityManager (`dataSource.manager`), which runs each statement outside any transaction');
  const status = statusOf(dialect, runner, dataSource);
  if (status() === 'closed') throw notInTransaction(endedTransaction(runner));
  return defineTransaction({
    dialect,
    source: SOURCE,
    fix: TYPEORM_FIX,
    query:
      dialect === 'mysql'
        ? mysqlQuery(runner)
        : typeOrmQuery(runner, dialect, dialect === 'postgres' ? pgVouchedQuery(runner) : betterSqliteVouchedQuery(runner, dataSource)),
    status,
  });
}

/** What `handle` is when it is not a TypeORM EntityManager, for the refusal; `undefined` for a manager. */
function notAManager(handle: unknown): string | undefined {
  if (typeof handle !== 'object' || handle === null) return `${handle === null ? 'null' : typeof handle}, not an EntityManager`;
  if ('createQueryRunner' in handle && 'manager' in handle) return 'a TypeORM DataSource, which runs each statement outside any transaction';
  if ('startTransaction' in handle && 'manager' in handle) return 'a TypeORM QueryRunner instead of its manager';
  const view = handle as TypeOrmManagerView;
  const isManager = typeof (view.dataSource ?? view.connection)?.options?.type === 'string' && 'transaction' in handle;
  return isManager ? undefined : 'an object that is not a TypeORM EntityManager';
}

function dialectOf(type: string): SqlDialect {
  const dialect = DIALECT_OF_TYPE[type];
  if (dialect !== undefined) return dialect;
  throw new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `fromTypeOrm: TypeORM database type '${type}' is not supported; outboxer/typeorm speaks ${Object.keys(DIALECT_OF_TYPE)
      .map((name) => `'${name}'`)
      .join(', ')}`,
    { options: ['type'] },
  );
}

/** What TypeORM and the driver know of the transaction, without a round trip (see `fromTypeOrm`). */
function statusOf(dialect: SqlDialect, runner: TypeOrmQueryRunnerView, dataSource: TypeOrmDataSourceView): () => TransactionStatus | undefined {
  switch (dialect) {
    case 'postgres':
      return () => {
        if (!isActive(runner)) return 'closed';
        // pg's word only when no statement is under way or queued on the client (a ROLLBACK asked for would run first)
        const client = pgClientOf(runner);
        return client === undefined ? undefined : pgClientStatus(client);
      };
    case 'mysql':
      return () => (isActive(runner) ? undefined : 'closed');
    case 'sqlite':
      return () => {
        if (!isActive(runner)) return 'closed';
        // the better-sqlite3 driver runs every query runner on its one connection
        const connection = betterSqliteConnectionOf(dataSource);
        if (connection === undefined) return undefined;
        return connection.inTransaction ? 'open' : 'closed';
      };
  }
}

/**
 * PostgreSQL and SQLite: through TypeORM's own runner (its logging and subscribers see the statement), as structured
 * results; a statement the store sends on `status()`'s word `'open'` goes to the driver itself, checked open in the
 * tick the driver gets it (TypeORM's runner awaits before sending: see `VouchedDriverQuery`).
 */
function typeOrmQuery(runner: TypeOrmQueryRunnerView, dialect: SqlDialect, vouchedQuery: VouchedDriverQuery): OutboxTransactionSpec<SqlDialect>['query'] {
  return async (sql, params, options) => {
    if (options?.vouched === true) return vouchedQuery(sql, params, options, () => notInTransaction(NO_LONGER_OPEN));
    refuseReleased(runner);
    const result = await runner.query(sql, [...params], true);
    const rows = Array.isArray(result.records) ? (result.records as Record<string, unknown>[]) : [];
    // better-sqlite3 counts no changes for a statement that returns rows (INSERT ... RETURNING): each row is one
    return { rows, affectedRows: result.affected ?? (dialect === 'sqlite' ? rows.length : 0) };
  };
}

/**
 * MariaDB/MySQL: on the runner's mysql2 connection with the store's own per-statement options, so `extra`
 * settings of the DataSource (`rowsAsArray`, `nestTables`, a `typeCast` of its own) never change the rows read.
 */
function mysqlQuery(runner: TypeOrmQueryRunnerView): OutboxTransactionSpec<SqlDialect>['query'] {
  return async (sql, params, options) => {
    // never vouched for here (`status()` is never 'open' on MariaDB/MySQL): nothing to confirm it by
    if (options?.vouched === true) throw notInTransaction(NO_LONGER_OPEN);
    refuseReleased(runner);
    const connection = runner.databaseConnection;
    if (!isMysqlCallbackConnection(connection)) throw notInTransaction('the EntityManager of a TypeORM query runner that holds no connection');
    return mysqlExecutor(connection.promise()).query(sql, params);
  };
}

/** A released runner's connection is back in the pool, maybe in another caller's hands: never run a statement there. */
function refuseReleased(runner: TypeOrmQueryRunnerView): void {
  if (runner.isReleased) throw notInTransaction(endedTransaction(runner));
}

const NO_LONGER_OPEN =
  "the EntityManager of a TypeORM transaction whose connection was no longer inside it (or about to end it) when the enqueue's statement was to be sent (an enqueue not awaited before a ROLLBACK?)";

function endedTransaction(runner: TypeOrmQueryRunnerView): string {
  return runner.isReleased
    ? 'the EntityManager of a TypeORM transaction that has ended (its query runner was released)'
    : 'the EntityManager of a TypeORM query runner outside a transaction (it committed, rolled back, or never started)';
}

function notInTransaction(what: string): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `fromTypeOrm was given ${what}: a message enqueued on it would not commit or roll back with your transaction. ${TYPEORM_FIX}`,
  );
}
