import { PGlite } from '@electric-sql/pglite';
import { eq, sql } from 'drizzle-orm';
import { drizzle as betterSqliteDrizzle } from 'drizzle-orm/better-sqlite3';
import { int, mysqlTable, text as mysqlText } from 'drizzle-orm/mysql-core';
import { drizzle as mysql2Drizzle, type MySql2Database } from 'drizzle-orm/mysql2';
import { drizzle as nodePgDrizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { integer, pgSchema, text } from 'drizzle-orm/pg-core';
import { drizzle as pgliteDrizzle, type PgliteDatabase } from 'drizzle-orm/pglite';
import { integer as sqliteInteger, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core';
import pg from 'pg';
import { expect } from 'vitest';
import { betterSqliteTransaction, fromDrizzle, type DrizzleBetterSqliteTransaction } from '../../src/adapters/drizzle/index.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { fromPglite } from '../../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import type { AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { mysqlTestControls } from '../support/dialects/mariadb/mysql-test-controls.js';
import { postgresTestControls } from '../support/dialects/postgres/postgres-test-controls.js';
import { sqliteTestControls } from '../support/dialects/sqlite/sqlite-test-controls.js';

/** The `tx` a Drizzle database's `transaction(async (tx) => ...)` hands its callback. */
export type TransactionOf<Db extends { transaction(work: never): unknown }> = Parameters<Parameters<Db['transaction']>[0]>[0];

/** A mistake the suite passes to `outbox.enqueue`: a handle that is not inside an open transaction. */
export interface Mistake {
  readonly name: string;
  readonly handle: () => unknown;
}

/** One Drizzle database for the suite: how this driver begins, nests and adapts transactions, and what it alone gets wrong. */
export interface DrizzleDatabase<Tx> {
  readonly store: AdapterRig['store'];
  readonly controls: AdapterRig['controls'];
  /** A transaction as a user of this driver runs one with awaited work (`db.transaction(async (tx) => ...)`). */
  begin<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** A nested transaction (a savepoint) in `outer`. */
  nest<T>(outer: Tx, work: (tx: Tx) => Promise<T>): Promise<T>;
  adapt(tx: Tx): OutboxTransaction;
  insertOrder(tx: Tx, id: number): Promise<void>;
  orderExists(id: number): Promise<boolean>;
  /** The driver's own mistakes (its root database first); `hold` keeps a transaction open until cleanup. */
  mistakesOfItsOwn(hold: HoldTransaction<Tx>): Promise<readonly Mistake[]>;
  /** Ends the connections and drops what the database made. */
  close(): Promise<void>;
}

/** Runs `prepare` in a transaction of `begin` and keeps that transaction open until the rig's cleanup. */
export type HoldTransaction<Tx> = (begin: (work: (tx: Tx) => Promise<void>) => Promise<unknown>, prepare: (tx: Tx) => Promise<void>) => Promise<Tx>;

export function drizzleRig<Tx>(database: DrizzleDatabase<Tx>): AdapterRig {
  const transactionOfContext = new WeakMap<OrmTransactionContext, Tx>();
  const contextOf = (tx: Tx): OrmTransactionContext => {
    const context: OrmTransactionContext = { tx: database.adapt(tx), insertOrder: (id) => database.insertOrder(tx, id) };
    transactionOfContext.set(context, tx);
    return context;
  };
  const held: (() => Promise<void>)[] = [];
  const hold: HoldTransaction<Tx> = async (begin, prepare) => {
    let letGo: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    let opened: (tx: Tx) => void = () => undefined;
    const ready = new Promise<Tx>((resolve) => (opened = resolve));
    const finished = begin(async (tx) => {
      await prepare(tx);
      opened(tx);
      await released;
    }).catch(() => undefined);
    held.push(async () => {
      letGo();
      await finished;
    });
    return Promise.race([ready, finished.then(() => Promise.reject(new Error('the held transaction ended before it was ready')))]);
  };
  return {
    store: database.store,
    controls: database.controls,
    transaction: (work) => database.begin((tx) => work(contextOf(tx))),
    nested: (context, inner) => {
      const outer = transactionOfContext.get(context);
      if (outer === undefined) throw new Error('nested() got a context this rig did not make');
      return database.nest(outer, (tx) => inner(contextOf(tx)));
    },
    async mistakes() {
      let committed: Tx | undefined;
      let adapterKeptAfterCommit: OutboxTransaction | undefined;
      await database.begin(async (tx) => {
        committed = tx;
        adapterKeptAfterCommit = database.adapt(tx);
      });
      let rolledBack: Tx | undefined;
      await database
        .begin(async (tx) => {
          rolledBack = tx;
          throw new Error('rolled back on purpose');
        })
        .catch(() => undefined);
      let savepoint: Tx | undefined;
      await database.begin((outer) =>
        database.nest(outer, async (inner) => {
          savepoint = inner;
        }),
      );
      return [
        ...(await database.mistakesOfItsOwn(hold)),
        { name: 'a transaction kept after it committed', handle: () => database.adapt(defined(committed)) },
        { name: 'an adapter made inside a transaction, used after it committed', handle: () => defined(adapterKeptAfterCommit) },
        { name: 'a transaction kept after it rolled back', handle: () => database.adapt(defined(rolledBack)) },
        { name: 'a savepoint kept after its outer transaction committed', handle: () => database.adapt(defined(savepoint)) },
      ];
    },
    runThroughOutbox: (outboxTransaction, work) => outboxTransaction(() => database.begin((tx) => work(contextOf(tx)))),
    orderExists: (id) => database.orderExists(id),
    async cleanup() {
      for (const release of held.splice(0)) await release();
      await database.close();
    },
  };
}

export function defined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the mistake was not set up');
  return value;
}

export async function postgresDatabase(): Promise<DrizzleDatabase<PostgresTx>> {
  const schema = uniqueName('drizzle');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  pool.on('error', () => undefined);
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
  await store.migrate();
  await pool.query(`CREATE TABLE "${schema}".orders (id int PRIMARY KEY, note text NOT NULL)`);
  const orders = pgSchema(schema).table('orders', { id: integer('id').primaryKey(), note: text('note').notNull() });
  const db = nodePgDrizzle({ client: pool });
  const sqlOnPool = async (text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as Record<string, unknown>[];
  return {
    store,
    controls: postgresTestControls(sqlOnPool, schema),
    begin: (work) => db.transaction(work),
    nest: (outer, work) => outer.transaction(work),
    adapt: (tx) => fromDrizzle(tx),
    insertOrder: async (tx, id) => void (await tx.insert(orders).values({ id, note: `order ${id}` })),
    orderExists: async (id) => (await db.select().from(orders).where(eq(orders.id, id))).length > 0,
    async mistakesOfItsOwn(hold) {
      // Drizzle still counts this one open (its client is checked out), but the protocol says the client is idle
      const endedByRawCommit = await hold(
        (work) => db.transaction(work),
        async (tx) => void (await tx.execute(sql`commit`)),
      );
      return [
        { name: 'the root Drizzle database (node-postgres)', handle: () => fromDrizzle(db as never) },
        { name: 'a transaction Drizzle thinks open, ended by a raw COMMIT', handle: () => fromDrizzle(endedByRawCommit) },
      ];
    },
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
export type PostgresTx = TransactionOf<NodePgDatabase>;

/** One PGlite for the test file (it takes seconds to start), a schema of its own for each rig; a test file closes it with `afterAll(closeSharedPglite)`. */
let sharedPglite: Promise<PGlite> | undefined;
export const pgliteInstance = () => (sharedPglite ??= PGlite.create());
export async function closeSharedPglite(): Promise<void> {
  if (sharedPglite !== undefined) await (await sharedPglite).close();
}

export async function pgliteDatabase(): Promise<DrizzleDatabase<PgliteTx>> {
  const pglite = await pgliteInstance();
  const schema = uniqueName('drizzle');
  const store = new PostgresOutboxStore(fromPglite(pglite), { schema });
  await store.migrate();
  await pglite.exec(`CREATE TABLE "${schema}".orders (id int PRIMARY KEY, note text NOT NULL)`);
  const orders = pgSchema(schema).table('orders', { id: integer('id').primaryKey(), note: text('note').notNull() });
  const db = pgliteDrizzle({ client: pglite });
  const sqlOnPglite = async (text: string, params: unknown[] = []) => (await pglite.query<Record<string, unknown>>(text, params)).rows;
  return {
    store,
    controls: postgresTestControls(sqlOnPglite, schema),
    begin: (work) => db.transaction(work),
    nest: (outer, work) => outer.transaction(work),
    adapt: (tx) => fromDrizzle(tx),
    insertOrder: async (tx, id) => void (await tx.insert(orders).values({ id, note: `order ${id}` })),
    orderExists: async (id) => (await db.select().from(orders).where(eq(orders.id, id))).length > 0,
    // PGlite has one connection: a transaction held open here would hold up the suite (a raw COMMIT is tested below)
    mistakesOfItsOwn: async () => [{ name: 'the root Drizzle database (PGlite)', handle: () => fromDrizzle(db as never) }],
    close: async () => void (await pglite.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)),
  };
}
export type PgliteTx = TransactionOf<PgliteDatabase>;

export async function mariadbDatabase(): Promise<DrizzleDatabase<MariadbTx>> {
  const fresh = await freshMysqlDatabase('drizzle');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  await fresh.sql('CREATE TABLE orders (id int PRIMARY KEY, note text NOT NULL)');
  const orders = mysqlTable('orders', { id: int('id').primaryKey(), note: mysqlText('note').notNull() });
  const db = mysql2Drizzle({ client: fresh.pool });
  return {
    store,
    controls: mysqlTestControls(fresh.sql),
    begin: (work) => db.transaction(work),
    nest: (outer, work) => outer.transaction(work),
    adapt: (tx) => fromDrizzle(tx),
    insertOrder: async (tx, id) => void (await tx.insert(orders).values({ id, note: `order ${id}` })),
    orderExists: async (id) => (await db.select().from(orders).where(eq(orders.id, id))).length > 0,
    async mistakesOfItsOwn(hold) {
      const endedByRawCommit = await hold(
        (work) => db.transaction(work),
        async (tx) => void (await tx.execute(sql`commit`)),
      );
      return [
        { name: 'the root Drizzle database (mysql2)', handle: () => fromDrizzle(db as never) },
        { name: 'a transaction Drizzle thinks open, ended by a raw COMMIT', handle: () => fromDrizzle(endedByRawCommit) },
      ];
    },
    close: fresh.cleanup,
  };
}
export type MariadbTx = TransactionOf<MySql2Database>;

export async function sqliteDatabase(): Promise<DrizzleDatabase<SqliteTx>> {
  const file = freshSqliteFile('drizzle');
  const store = new SqliteOutboxStore(file.database());
  await store.migrate();
  const plain = file.database();
  await plain.write(() => void plain.run('CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT NOT NULL)'));
  const orders = sqliteTable('orders', { id: sqliteInteger('id').primaryKey(), note: sqliteText('note').notNull() });
  const db = betterSqliteDrizzle({ client: file.connect() });
  return {
    store,
    controls: sqliteTestControls(plain),
    begin: (work) => betterSqliteTransaction(db, work),
    nest: (outer, work) => betterSqliteTransaction(outer, work),
    adapt: (tx) => fromDrizzle(tx),
    insertOrder: async (tx, id) => void (await tx.insert(orders).values({ id, note: `order ${id}` })),
    orderExists: async (id) => (await db.select().from(orders).where(eq(orders.id, id))).length > 0,
    async mistakesOfItsOwn(hold) {
      // Drizzle's own transaction on better-sqlite3 is synchronous: it has committed before an awaited enqueue runs
      const synchronous = db.transaction((tx) => tx);
      // on a connection of its own: a held transaction keeps its connection's turn until cleanup
      const other = betterSqliteDrizzle({ client: file.connect() });
      const endedByRawCommit = await hold(
        (work) => betterSqliteTransaction(other, work),
        async (tx) => void tx.run(sql`commit`),
      );
      return [
        { name: 'the root Drizzle database (better-sqlite3)', handle: () => fromDrizzle(db as never) },
        { name: "Drizzle's own synchronous better-sqlite3 transaction", handle: () => fromDrizzle(synchronous as never) },
        { name: 'a transaction of betterSqliteTransaction ended by a raw COMMIT', handle: () => fromDrizzle(endedByRawCommit) },
      ];
    },
    close: () => file.cleanup(),
  };
}
export type SqliteTx = DrizzleBetterSqliteTransaction;

export const drizzleHarnesses: readonly AdapterHarness[] = [
  { orm: 'Drizzle', database: 'postgres', setup: async () => drizzleRig(await postgresDatabase()) },
  { orm: 'Drizzle', database: 'pglite', setup: async () => drizzleRig(await pgliteDatabase()) },
  { orm: 'Drizzle', database: 'mariadb', setup: async () => drizzleRig(await mariadbDatabase()) },
  { orm: 'Drizzle', database: 'sqlite', setup: async () => drizzleRig(await sqliteDatabase()) },
];

export const message = (n: number) => ({ topic: 'orders.created', type: 'order.created', key: `order-${n}`, payload: { n } });
export const refusedAsNotInTransaction = expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
