/**
 * `outboxer/drizzle`: a Drizzle transaction as the outbox's transaction, on PostgreSQL (node-postgres, PGlite),
 * MariaDB/MySQL (mysql2) and SQLite (better-sqlite3).
 *
 * @example
 * await outbox.transaction(() =>
 *   db.transaction(async (tx) => {
 *     await tx.insert(orders).values({ id: 7 });
 *     await outbox.enqueue(fromDrizzle(tx), { topic: 'orders', type: 'order.created', payload: { id: 7 } });
 *   }),
 * );
 *
 * Drizzle is an optional peer dependency: this module imports only its types.
 */
import type { TablesRelationalConfig } from 'drizzle-orm';
import type { MySqlQueryResultHKT, MySqlTransaction, PreparedQueryHKTBase } from 'drizzle-orm/mysql-core';
import type { PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { mysql2Transaction } from '../../stores/mysql/mysql-transaction.js';
import type { MysqlQueryable } from '../../stores/mysql/database.js';
import { betterSqliteOutboxTransaction } from './better-sqlite-outbox-transaction.js';
import { betterSqliteTransactionState, type DrizzleBetterSqliteTransaction } from './better-sqlite-transaction.js';
import { nodePgTransaction, pgliteTransaction } from './postgres-transactions.js';

export { betterSqliteTransaction, type DrizzleBetterSqliteTransaction } from './better-sqlite-transaction.js';

export const DRIZZLE_FIX =
  'Enqueue inside the callback of db.transaction(async (tx) => { ...; await outbox.enqueue(fromDrizzle(tx), message); }) and pass that tx, not db.';

export const DRIZZLE_BETTER_SQLITE_FIX =
  "Drizzle's better-sqlite3 transactions are synchronous (they commit before an awaited enqueue runs): run yours with " +
  "betterSqliteTransaction(db, async (tx) => { ...; await outbox.enqueue(fromDrizzle(tx), message); }) from 'outboxer/drizzle'.";

/** The name Drizzle gives each of its classes (`static [entityKind]`), so they are told apart without importing them. */
const ENTITY_KIND = Symbol.for('drizzle:entityKind');

/** The drivers whose transaction connection the adapter reaches (told by the entity kind of the transaction's session). */
const SUPPORTED = "Drizzle's node-postgres and PGlite drivers (PostgreSQL), mysql2 (MariaDB/MySQL) and better-sqlite3 (SQLite)";

/**
 * The caller's Drizzle transaction as outboxer's stores take it: `outbox.enqueue(fromDrizzle(tx), message)`.
 * Statements run on the transaction's own driver connection, never through Drizzle's query builders:
 * - node-postgres: the transaction's client; the protocol's transaction status vouches (open, failed, idle), and a
 *   client that went back to the pool is refused;
 * - PGlite: PGlite's transaction object; once it is closed it is refused, before that the store proves it open;
 * - mysql2: the transaction's connection; no status (each of the store's writes carries its own proof);
 * - better-sqlite3: the `tx` of `betterSqliteTransaction` (Drizzle's own `db.transaction` there is synchronous),
 *   open while that transaction runs and the connection says it is inside one.
 *
 * The root `db` does not compile (a Drizzle transaction has `rollback()` and `nestedIndex`, the database has not) and
 * is refused at once at run time (`OUTBOXER_NOT_IN_TRANSACTION`), as is a synchronous better-sqlite3 transaction.
 * Another driver is a `ConfigurationError` (`OUTBOXER_INVALID_OPTION`) naming those supported.
 */
export function fromDrizzle<TQueryResult extends PgQueryResultHKT, TFullSchema extends Record<string, unknown>, TSchema extends TablesRelationalConfig>(
  tx: PgTransaction<TQueryResult, TFullSchema, TSchema>,
): OutboxTransaction<'postgres'>;
export function fromDrizzle<
  TQueryResult extends MySqlQueryResultHKT,
  TPreparedQuery extends PreparedQueryHKTBase,
  TFullSchema extends Record<string, unknown>,
  TSchema extends TablesRelationalConfig,
>(tx: MySqlTransaction<TQueryResult, TPreparedQuery, TFullSchema, TSchema>): OutboxTransaction<'mysql'>;
export function fromDrizzle<TFullSchema extends Record<string, unknown>>(tx: DrizzleBetterSqliteTransaction<TFullSchema>): OutboxTransaction<'sqlite'>;
export function fromDrizzle(tx: unknown): OutboxTransaction {
  const sqlite = betterSqliteTransactionState(tx);
  if (sqlite !== undefined)
    return betterSqliteOutboxTransaction(sqlite, {
      source: 'a Drizzle transaction of betterSqliteTransaction (better-sqlite3)',
      fix: DRIZZLE_BETTER_SQLITE_FIX,
    });
  const kinds = entityKinds(tx);
  const session = sessionOf(tx);
  const driver = session === undefined ? undefined : entityKinds(session)[0];
  const client = (session as { client?: unknown } | undefined)?.client;
  if (kinds.includes('PgTransaction')) {
    if (driver === 'NodePgSession' && session !== undefined)
      return nodePgTransaction(session, client, { source: 'a Drizzle transaction (node-postgres)', fix: DRIZZLE_FIX });
    if (driver === 'PgliteSession') return pgliteTransaction(client, { source: 'a Drizzle transaction (PGlite)', fix: DRIZZLE_FIX });
    throw unsupported('PostgreSQL', driver);
  }
  if (kinds.includes('MySqlTransaction')) {
    if (driver === 'MySql2Session') return mysql2DrizzleTransaction(client as MysqlQueryable);
    throw unsupported('MariaDB/MySQL', driver);
  }
  if (kinds.includes('SQLiteTransaction')) {
    if (driver === 'BetterSQLiteSession') {
      throw new OutboxerError(
        'OUTBOXER_NOT_IN_TRANSACTION',
        `fromDrizzle was given a transaction of Drizzle's db.transaction on better-sqlite3, which is synchronous: it commits as soon as its callback returns, before an awaited enqueue runs, so the message could not be part of it. ${DRIZZLE_BETTER_SQLITE_FIX}`,
      );
    }
    throw unsupported('SQLite', driver);
  }
  if (kinds.some((kind) => ROOT_DATABASES.has(kind))) {
    throw new OutboxerError(
      'OUTBOXER_NOT_IN_TRANSACTION',
      `fromDrizzle was given the Drizzle database itself (${kinds[0]}), not a transaction: each statement on it commits on its own, so the message would be stored even if your transaction rolled back. ${driver === 'BetterSQLiteSession' ? DRIZZLE_BETTER_SQLITE_FIX : DRIZZLE_FIX}`,
    );
  }
  throw new OutboxerError('OUTBOXER_NOT_IN_TRANSACTION', `fromDrizzle was given ${describe(tx)}, not a Drizzle transaction. ${DRIZZLE_FIX}`);
}

/**
 * The transaction's mysql2 connection. It vouches for nothing (each of the MariaDB store's writes carries its own
 * proof), so a statement sent as vouched for is refused: nothing could confirm it.
 */
function mysql2DrizzleTransaction(connection: MysqlQueryable): OutboxTransaction<'mysql'> {
  const description = { source: 'a Drizzle transaction (mysql2)', fix: DRIZZLE_FIX };
  const onConnection = mysql2Transaction(connection, description);
  return defineTransaction({
    dialect: 'mysql',
    ...description,
    query(sql, params, options) {
      if (options?.vouched === true) {
        return Promise.reject(
          new OutboxerError(
            'OUTBOXER_NOT_IN_TRANSACTION',
            `enqueue was given ${description.source}, which vouches for no transaction: nothing was written. ${DRIZZLE_FIX}`,
          ),
        );
      }
      return onConnection.query(sql, params, options);
    },
  });
}

const ROOT_DATABASES: ReadonlySet<string> = new Set(['PgDatabase', 'MySqlDatabase', 'BaseSQLiteDatabase']);

/** The entity kinds of a value's class and its ancestors, most derived first (`['NodePgTransaction', 'PgTransaction', 'PgDatabase']`). */
function entityKinds(value: unknown): string[] {
  const kinds: string[] = [];
  if (typeof value !== 'object' || value === null) return kinds;
  for (let type: unknown = (value as { constructor?: unknown }).constructor; typeof type === 'function'; type = Object.getPrototypeOf(type)) {
    if (Object.prototype.hasOwnProperty.call(type, ENTITY_KIND)) {
      const kind: unknown = (type as unknown as Record<symbol, unknown>)[ENTITY_KIND];
      if (typeof kind === 'string') kinds.push(kind);
    }
  }
  return kinds;
}

/** The session of a Drizzle database or transaction (every dialect's `session` field): it holds the driver's client. */
function sessionOf(value: unknown): object | undefined {
  const session = (value as { session?: unknown } | null)?.session;
  return typeof session === 'object' && session !== null ? session : undefined;
}

function unsupported(database: string, driver: string | undefined): ConfigurationError {
  return new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `fromDrizzle supports ${SUPPORTED}; this ${database} transaction runs on ${driver === undefined ? 'an unknown session' : `Drizzle's ${driver}`}`,
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return `an object (${String((value as { constructor?: { name?: unknown } }).constructor?.name ?? 'no class')})`;
}
