import type { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import type { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import type { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import type { TestControls } from './store-harness.js';

/** A database an ORM adapter runs on in the suite: each runner lists those its ORM speaks. */
export type AdapterDatabase = 'postgres' | 'pglite' | 'mariadb' | 'sqlite';

/** What the adapter conformance suite does inside one transaction the ORM itself runs. */
export interface OrmTransactionContext {
  /** The adapter over the ORM's transaction handle: `fromKysely(trx)`, `fromPrisma(tx)`, ... */
  readonly tx: OutboxTransaction;
  /** Writes a business row `(id, note)` into the rig's `orders` table through the ORM's own API, in this transaction. */
  insertOrder(id: number): Promise<void>;
}

/** One ORM over one fresh, isolated database (schema, database or file of its own) with the outbox migrated. */
export interface AdapterRig {
  /** The outboxer store on the same database and table, for `new Outbox(store)` and for reading back. */
  readonly store: PostgresOutboxStore | MysqlOutboxStore | SqliteOutboxStore;
  /** Reaches states of the outbox table the port cannot (the same controls as the store suite). */
  readonly controls: TestControls;
  /**
   * Runs `work` in a transaction of the ORM's own API (`db.transaction().execute(...)`, `prisma.$transaction(...)`),
   * committed when `work` resolves and rolled back when it rejects (the rejection is passed on).
   */
  transaction<T>(work: (context: OrmTransactionContext) => Promise<T>): Promise<T>;
  /**
   * Runs `inner` in a nested transaction (a savepoint) of the ORM inside `outer`'s transaction, as the ORM nests
   * them; `null` when the ORM has no nested transactions (the suite says so and skips nothing silently).
   */
  readonly nested: null | (<T>(context: OrmTransactionContext, inner: (context: OrmTransactionContext) => Promise<T>) => Promise<T>);
  /**
   * The handles a user might pass by mistake, each through the adapter (past its type error, if any), none
   * inside an open transaction: the root handle (`db`, `dataSource.manager`, `prisma`), a transaction handle kept
   * after its transaction committed, ... Every one must be refused with OUTBOXER_NOT_IN_TRANSACTION, writing nothing.
   */
  mistakes(): Promise<readonly { readonly name: string; readonly handle: () => unknown }[]>;
  /**
   * The ORM's transaction run through `outbox.transaction` as the README shows it, so the relay wakes after the
   * commit: `work` gets the adapter handle as above.
   */
  runThroughOutbox<T>(outboxTransaction: <R>(run: () => Promise<R>) => Promise<R>, work: (context: OrmTransactionContext) => Promise<T>): Promise<T>;
  /** Whether the business row exists (plain SQL, outside any transaction). */
  orderExists(id: number): Promise<boolean>;
  /** Ends the ORM's connections and removes the schema, database or file. */
  cleanup(): Promise<void>;
}

export interface AdapterHarness {
  /** `Kysely`, `Knex`, ... as the test names show it. */
  readonly orm: string;
  readonly database: AdapterDatabase;
  setup(): Promise<AdapterRig>;
}
