import { OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { pgClientTransaction, type PgClientLike } from '../../stores/postgres/pg-client.js';

/** What a message says of the handle and how to pass an open transaction instead. */
export interface TransactionDescription {
  readonly source: string;
  readonly fix: string;
}

/** A node-postgres `Client` or `PoolClient`; a client checked out of a pool carries the `release` of that checkout. */
interface NodePgClientLike extends PgClientLike {
  readonly release?: unknown;
}

/** A PGlite transaction (`pglite.transaction(async (tx) => ...)`): `closed` once it committed or rolled back. */
interface PgliteTransactionLike {
  query(sql: string, params: unknown[]): Promise<{ rows: unknown[]; affectedRows?: number }>;
  readonly closed: boolean;
}

/**
 * The pool checkout each Drizzle transaction ran on when the adapter first saw it. A Drizzle transaction on a pool
 * has a session of its own holding the checked-out client, and pg-pool gives every checkout a new `release`: a
 * different one means the client went back to the pool and may now serve someone else's transaction.
 */
const checkouts = new WeakMap<object, unknown>();

/**
 * The transaction of Drizzle's node-postgres driver: statements on the transaction's own client (named statements
 * stay prepared on it), its status from the protocol's ReadyForQuery ('T' open, 'E' failed, 'I' idle), and
 * `'closed'` once the client was lent out again.
 */
export function nodePgTransaction(session: object, client: unknown, describe: TransactionDescription): OutboxTransaction<'postgres'> {
  const pgClient = client as NodePgClientLike;
  if (!checkouts.has(session)) checkouts.set(session, pgClient.release);
  const checkout = checkouts.get(session);
  const lentAgain = () => pgClient.release !== checkout;
  const onClient = pgClientTransaction(pgClient, describe);
  return defineTransaction({
    dialect: 'postgres',
    ...describe,
    query(sql, params, options) {
      // checked in the tick the statement goes to the client: once lent again, it would run in another transaction
      if (lentAgain()) return Promise.reject(returnedToPool(describe));
      return onClient.query(sql, params, options);
    },
    status: () => (lentAgain() ? 'closed' : onClient.status?.()),
  });
}

/**
 * The transaction of Drizzle's PGlite driver, on PGlite's own transaction object. PGlite says when it ended
 * (`closed`); while it has not, the store proves the transaction open in the database, since PGlite keeps no
 * protocol status (a raw COMMIT sent through the transaction would leave `closed` false).
 */
export function pgliteTransaction(client: unknown, describe: TransactionDescription): OutboxTransaction<'postgres'> {
  const transaction = client as PgliteTransactionLike;
  const knowsWhenClosed = typeof transaction.closed === 'boolean';
  return defineTransaction({
    dialect: 'postgres',
    ...describe,
    async query(sql, params, options) {
      // status() never says 'open' here, so nothing could confirm one
      if (options?.vouched === true)
        throw new OutboxerError(
          'OUTBOXER_NOT_IN_TRANSACTION',
          `enqueue was given ${describe.source}, which vouches for no transaction: nothing was written. ${describe.fix}`,
        );
      const result = await transaction.query(sql, [...params]);
      return { rows: result.rows as Record<string, unknown>[], affectedRows: result.affectedRows ?? 0 };
    },
    status: () => (knowsWhenClosed && transaction.closed ? 'closed' : undefined),
  });
}

function returnedToPool(describe: TransactionDescription): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `enqueue was given ${describe.source} whose transaction already ended (its client went back to the pool and may serve another transaction), so nothing was written. ${describe.fix}`,
  );
}
