import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction, type SqlDialect, type TransactionStatus } from '../../core/ports/outbox-transaction.js';
import { driverRunner, type DriverRunner } from './driver-runner.js';

/**
 * What `fromKnex` takes: a Knex transaction (`Knex.Transaction`, the `trx` of `knex.transaction(async (trx) => ...)`).
 * The root `knex` instance has neither `isCompleted` nor `executionPromise`, so passing it does not compile.
 */
export interface KnexTransactionLike {
  isCompleted(): boolean;
  readonly executionPromise: Promise<unknown>;
  readonly client: unknown;
}

/** The client object of a Knex transaction: it hands out only the transaction's own connection. */
interface KnexTransactionClient {
  readonly transacting: true;
  readonly driverName: string;
  acquireConnection(): Promise<unknown>;
}

const FIX = 'Pass the trx Knex gives you, inside its transaction: await knex.transaction(async (trx) => { await outbox.enqueue(fromKnex(trx), message); })';

const ENDED = 'a Knex transaction that has already ended (committed, rolled back, or its savepoint released)';

const ENDED_BEFORE_STATEMENT =
  "a Knex transaction whose connection was no longer inside it (or about to end it) when the enqueue's statement was to be sent (an enqueue not awaited before a ROLLBACK?), so nothing was written";

/** The Knex drivers whose connection the adapter reaches, and the dialect each speaks. */
const DIALECT_OF_DRIVER: Readonly<Record<string, SqlDialect>> = { pg: 'postgres', mysql2: 'mysql', 'better-sqlite3': 'sqlite' };

/** The runner of each transaction's connection, once Knex handed it over (it is the same for the transaction's life). */
const runners = new WeakMap<KnexTransactionLike, DriverRunner>();
const pendingRunners = new WeakMap<KnexTransactionLike, Promise<DriverRunner>>();

/**
 * The caller's Knex transaction as outboxer's stores take it: `outbox.enqueue(fromKnex(trx), message)`.
 * Statements run on the transaction's own driver connection (node-postgres, mysql2 or better-sqlite3), never
 * through `trx.raw()`, and are refused once Knex counts the transaction completed (committed or rolled back,
 * or the savepoint released), since its connection then goes back to the pool.
 */
export function fromKnex(trx: KnexTransactionLike): OutboxTransaction {
  const client = transactionClient(trx);
  if (trx.isCompleted()) throw notInTransaction(ENDED);
  const dialect = DIALECT_OF_DRIVER[client.driverName];
  if (dialect === undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `fromKnex supports the Knex clients 'pg' (PostgreSQL), 'mysql2' (MariaDB/MySQL) and 'better-sqlite3' (SQLite); this transaction's client is '${client.driverName}'`,
    );
  }
  const pending = runnerOf(trx, client, dialect);
  pending.catch(() => undefined); // the same rejection reaches the first query
  return defineTransaction({
    dialect,
    source: 'a Knex transaction',
    fix: FIX,
    async query(sql, params, options) {
      const runner = runners.get(trx) ?? (await pending);
      // checked in the same tick as the driver call: after Knex's COMMIT the connection may serve someone else
      if (trx.isCompleted()) throw notInTransaction(ENDED);
      // the store wrote on the driver's word 'open': a ROLLBACK queued since (a raw one Knex did not see) would run first
      if (options?.vouched === true && runner.transactionStatus() !== 'open') throw notInTransaction(ENDED_BEFORE_STATEMENT);
      return runner.run(sql, params, options);
    },
    status() {
      const runner = runners.get(trx);
      if (runner !== undefined) return statusOf(trx, runner);
      // Knex hands the connection over a microtask after fromKnex: the status waits for it
      return pending.then((known) => statusOf(trx, known));
    },
  });
}

/** Knex's word first (a completed transaction's connection is back in the pool), then the driver's. */
function statusOf(trx: KnexTransactionLike, runner: DriverRunner): TransactionStatus | undefined {
  return trx.isCompleted() ? 'closed' : runner.transactionStatus();
}

function runnerOf(trx: KnexTransactionLike, client: KnexTransactionClient, dialect: SqlDialect): Promise<DriverRunner> {
  let pending = pendingRunners.get(trx);
  if (pending === undefined) {
    pending = client.acquireConnection().then((connection) => {
      const runner = driverRunner(dialect, connection);
      runners.set(trx, runner);
      return runner;
    });
    pendingRunners.set(trx, pending);
  }
  return pending;
}

/** The transaction's client, or a refusal naming the fix when `trx` is the root `knex` or anything else. */
function transactionClient(trx: KnexTransactionLike): KnexTransactionClient {
  const value: unknown = trx;
  const fields =
    (typeof value === 'object' || typeof value === 'function') && value !== null
      ? (value as { isTransaction?: unknown; isCompleted?: unknown; client?: unknown })
      : {};
  const client = typeof fields.client === 'object' && fields.client !== null ? (fields.client as Partial<Record<keyof KnexTransactionClient, unknown>>) : {};
  const isTransaction =
    fields.isTransaction === true &&
    typeof fields.isCompleted === 'function' &&
    client.transacting === true &&
    typeof client.acquireConnection === 'function' &&
    typeof client.driverName === 'string';
  if (isTransaction) return client as KnexTransactionClient;
  const isRootKnex = typeof value === 'function' && typeof client.acquireConnection === 'function';
  throw notInTransaction(isRootKnex ? 'the root knex instance, which runs each statement outside any transaction' : 'something that is not a Knex transaction');
}

function notInTransaction(what: string): OutboxerError {
  return new OutboxerError('OUTBOXER_NOT_IN_TRANSACTION', `fromKnex got ${what}. ${FIX}`);
}
