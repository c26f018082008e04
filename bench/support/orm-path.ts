import type { Outbox } from '../../src/index.js';
import { fromPgPool, type PostgresOutboxStore, type SqlExecutor } from '../../src/stores/postgres/index.js';
import type { PgTransactionInput } from '../../src/stores/postgres/pg-transaction.js';
import { benchPool } from './database.js';

/** The outbox of scenario (j): the PostgreSQL store, taking a pg client or any adapter's transaction. */
export type OrmBenchOutbox = Outbox<PgTransactionInput, PostgresOutboxStore>;

/** One transaction as the work inside it sees it, whatever runs it. */
export interface TransactionScope {
  /** Writes the business row `(id, note)` into `orders` through the path's own API, in this transaction. */
  insertOrder(id: number): Promise<void>;
  /** What `outbox.enqueue` is given, made as a user makes it: the pg client itself, or `fromKysely(trx)`, ... */
  handle(): PgTransactionInput;
}

/** A way to write: raw pg, or one ORM on one connection of its own, over the rig's schema. */
export interface OrmPath {
  /** `raw pg`, `Kysely`, ... as the report names it. */
  readonly name: string;
  /** One transaction of the path's own API (raw: BEGIN/COMMIT on its client), committed when `work` resolves. */
  transaction<T>(work: (scope: TransactionScope) => Promise<T>): Promise<T>;
  /** The same transaction run through `outbox.transaction` as the docs show it, so the relay wakes after the commit. */
  throughOutbox<T>(outbox: OrmBenchOutbox, work: (scope: TransactionScope) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Where the paths write: the rig's schema (with `orders` and the outbox tables). */
export interface OrmRig {
  readonly schema: string;
  readonly url: string;
  /** `application_name` of a path's connection: the server's views tell the paths apart. */
  applicationName(path: string): string;
}

export const ORDER_NOTE = 'bench order';

/**
 * The ORMs' transactions run through `outbox.transaction(() => ormTransaction)`: the ORM begins and commits, the
 * outbox wakes its relays once that resolved.
 */
export function throughOutboxOf(transaction: OrmPath['transaction']): OrmPath['throughOutbox'] {
  return (outbox, work) => outbox.transaction(() => transaction(work));
}

/**
 * The path every adapter is compared with: a pg client of a one-connection Pool inside BEGIN ... COMMIT
 * (`fromPgPool(pool).transaction`), handed to `outbox.enqueue` as it is; through the outbox,
 * `outbox.transaction(fromPgPool(pool), work)`.
 */
export function rawPgPath(rig: OrmRig): OrmPath {
  const pool = benchPool(rig.applicationName('raw'), 1);
  const database = fromPgPool(pool);
  const insert = `INSERT INTO "${rig.schema}".orders (id, note) VALUES ($1, $2)`;
  const scopeOf = (client: SqlExecutor): TransactionScope => ({
    insertOrder: async (id) => void (await client.query(insert, [id, ORDER_NOTE])),
    handle: () => client,
  });
  return {
    name: 'raw pg',
    transaction: (work) => database.transaction((client) => work(scopeOf(client))),
    throughOutbox: (outbox, work) => outbox.transaction(database, (client) => work(scopeOf(client))),
    close: () => pool.end(),
  };
}
