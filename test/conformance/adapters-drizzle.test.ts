import Database from 'better-sqlite3';
import { PGlite } from '@electric-sql/pglite';
import { eq, sql } from 'drizzle-orm';
import { drizzle as betterSqliteDrizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { int, mysqlTable, text as mysqlText } from 'drizzle-orm/mysql-core';
import { drizzle as mysql2Drizzle, type MySql2Database } from 'drizzle-orm/mysql2';
import { drizzle as nodePgDrizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { integer, PgDialect, pgSchema, text } from 'drizzle-orm/pg-core';
import { drizzle as pgliteDrizzle, type PgliteDatabase } from 'drizzle-orm/pglite';
import { PgProxyTransaction, drizzle as pgProxyDrizzle } from 'drizzle-orm/pg-proxy';
import { integer as sqliteInteger, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core';
import { drizzle as sqliteProxyDrizzle } from 'drizzle-orm/sqlite-proxy';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { betterSqliteTransaction, fromDrizzle, type DrizzleBetterSqliteTransaction } from '../../src/adapters/drizzle/index.js';
import { ConfigurationError, OutboxerError } from '../../src/core/errors.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { fromPglite } from '../../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile, type FreshSqliteFile } from '../support/sqlite-file.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import type { AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { expectNothingCommittedAlone, expectVouchedOnlyWhereOpen, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { mysqlTestControls } from './mysql-test-controls.js';
import { postgresTestControls } from './postgres-test-controls.js';
import { sqliteTestControls } from './sqlite-test-controls.js';

/** The `tx` a Drizzle database's `transaction(async (tx) => ...)` hands its callback. */
type TransactionOf<Db extends { transaction(work: never): unknown }> = Parameters<Parameters<Db['transaction']>[0]>[0];

/** A mistake the suite passes to `outbox.enqueue`: a handle that is not inside an open transaction. */
interface Mistake {
  readonly name: string;
  readonly handle: () => unknown;
}

/** One Drizzle database for the suite: how this driver begins, nests and adapts transactions, and what it alone gets wrong. */
interface DrizzleDatabase<Tx> {
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
type HoldTransaction<Tx> = (begin: (work: (tx: Tx) => Promise<void>) => Promise<unknown>, prepare: (tx: Tx) => Promise<void>) => Promise<Tx>;

function drizzleRig<Tx>(database: DrizzleDatabase<Tx>): AdapterRig {
  const transactionOfContext = new WeakMap<OrmTransactionContext, Tx>();
  const contextOf = (tx: Tx): OrmTransactionContext => {
    const context: OrmTransactionContext = { tx: database.adapt(tx), insertOrder: (id) => database.insertOrder(tx, id) };
    transactionOfContext.set(context, tx);
    return context;
  };
  const held: (() => Promise<void>)[] = [];
  const hold: HoldTransaction<Tx> = async (begin, prepare) => {
    let letGo = () => undefined as void;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    let opened = (_tx: Tx) => undefined as void;
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

function defined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the mistake was not set up');
  return value;
}

async function postgresDatabase(): Promise<DrizzleDatabase<PostgresTx>> {
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
      const endedByRawCommit = await hold((work) => db.transaction(work), async (tx) => void (await tx.execute(sql`commit`)));
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
type PostgresTx = TransactionOf<NodePgDatabase>;

/** One PGlite for the file (it takes seconds to start), a schema of its own for each rig; closed after the last test. */
let sharedPglite: Promise<PGlite> | undefined;
const pgliteInstance = () => (sharedPglite ??= PGlite.create());
afterAll(async () => {
  if (sharedPglite !== undefined) await (await sharedPglite).close();
});

async function pgliteDatabase(): Promise<DrizzleDatabase<PgliteTx>> {
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
type PgliteTx = TransactionOf<PgliteDatabase>;

async function mariadbDatabase(): Promise<DrizzleDatabase<MariadbTx>> {
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
      const endedByRawCommit = await hold((work) => db.transaction(work), async (tx) => void (await tx.execute(sql`commit`)));
      return [
        { name: 'the root Drizzle database (mysql2)', handle: () => fromDrizzle(db as never) },
        { name: 'a transaction Drizzle thinks open, ended by a raw COMMIT', handle: () => fromDrizzle(endedByRawCommit) },
      ];
    },
    close: fresh.cleanup,
  };
}
type MariadbTx = TransactionOf<MySql2Database>;

async function sqliteDatabase(): Promise<DrizzleDatabase<SqliteTx>> {
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
      const endedByRawCommit = await hold((work) => betterSqliteTransaction(other, work), async (tx) => void tx.run(sql`commit`));
      return [
        { name: 'the root Drizzle database (better-sqlite3)', handle: () => fromDrizzle(db as never) },
        { name: "Drizzle's own synchronous better-sqlite3 transaction", handle: () => fromDrizzle(synchronous as never) },
        { name: 'a transaction of betterSqliteTransaction ended by a raw COMMIT', handle: () => fromDrizzle(endedByRawCommit) },
      ];
    },
    close: () => file.cleanup(),
  };
}
type SqliteTx = DrizzleBetterSqliteTransaction;

const drizzleHarnesses: readonly AdapterHarness[] = [
  { orm: 'Drizzle', database: 'postgres', setup: async () => drizzleRig(await postgresDatabase()) },
  { orm: 'Drizzle', database: 'pglite', setup: async () => drizzleRig(await pgliteDatabase()) },
  { orm: 'Drizzle', database: 'mariadb', setup: async () => drizzleRig(await mariadbDatabase()) },
  { orm: 'Drizzle', database: 'sqlite', setup: async () => drizzleRig(await sqliteDatabase()) },
];
for (const harness of drizzleHarnesses) describeAdapterConformance(harness);

const message = (n: number) => ({ topic: 'orders.created', type: 'order.created', key: `order-${n}`, payload: { n } });
const refusedAsNotInTransaction = expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });

/** What only Drizzle's adapter does: its type-level refusals, where statements go, and each driver's word on status. */
describe('fromDrizzle', () => {
  describe('refusals', () => {
    it('refuses the root database at compile time and at once at run time, naming the fix, on every dialect', async () => {
      const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
      const mysqlPool = mysql.createPool({ uri: services.mysqlUrl, connectionLimit: 1 });
      const connection = new Database(':memory:');
      try {
        const nodePg = nodePgDrizzle({ client: pool });
        // @ts-expect-error the root database is no PgTransaction: it has neither rollback() nor nestedIndex
        const refuse = () => fromDrizzle(nodePg);
        expect(refuse).toThrow(OutboxerError);
        expect(refuse).toThrow(refusedAsNotInTransaction);
        expect(refuse).toThrow(
          'fromDrizzle was given the Drizzle database itself (NodePgDatabase), not a transaction: each statement on it commits on its own, so the message ' +
            'would be stored even if your transaction rolled back. Enqueue inside the callback of db.transaction(async (tx) => { ...; ' +
            'await outbox.enqueue(fromDrizzle(tx), message); }) and pass that tx, not db.',
        );
        const pglite = pgliteDrizzle({ client: await pgliteInstance() });
        // @ts-expect-error the root database is no PgTransaction
        expect(() => fromDrizzle(pglite)).toThrow(/the Drizzle database itself \(PgliteDatabase\), not a transaction/);
        const mysql2 = mysql2Drizzle({ client: mysqlPool });
        // @ts-expect-error the root database is no MySqlTransaction
        expect(() => fromDrizzle(mysql2)).toThrow(/the Drizzle database itself \(MySql2Database\), not a transaction/);
        const betterSqlite = betterSqliteDrizzle({ client: connection });
        // @ts-expect-error the root database is not the tx of betterSqliteTransaction
        expect(() => fromDrizzle(betterSqlite)).toThrow(
          /the Drizzle database itself \(BetterSQLite3Database\), not a transaction.*betterSqliteTransaction\(db, async \(tx\) => \{ \.\.\.; await outbox\.enqueue\(fromDrizzle\(tx\), message\); \}\)/,
        );
      } finally {
        await pool.end();
        await mysqlPool.end();
        connection.close();
      }
    });

    it("refuses Drizzle's own synchronous better-sqlite3 transaction at compile time and at once, naming betterSqliteTransaction", () => {
      const connection = new Database(':memory:');
      try {
        betterSqliteDrizzle({ client: connection }).transaction((tx) => {
          // @ts-expect-error a synchronous transaction has committed before an awaited enqueue runs
          const refuse = () => fromDrizzle(tx);
          expect(refuse).toThrow(refusedAsNotInTransaction);
          expect(refuse).toThrow(/synchronous: it commits as soon as its callback returns.*betterSqliteTransaction\(db, async \(tx\) =>/);
        });
      } finally {
        connection.close();
      }
    });

    it('refuses what is no Drizzle object at all', () => {
      for (const value of [null, undefined, 42, {}, { query: () => Promise.resolve({ rows: [] }) }]) {
        expect(() => fromDrizzle(value as never)).toThrow(refusedAsNotInTransaction);
      }
      expect(() => fromDrizzle({} as never)).toThrow(/^fromDrizzle was given an object \(Object\), not a Drizzle transaction\. Enqueue inside/);
    });

    it('refuses a transaction of a driver whose connection it does not reach, naming those it does', async () => {
      // Drizzle's pg-proxy driver runs no transactions itself: its transaction class over its session stands for any other driver's
      const onProxy = new PgProxyTransaction(new PgDialect(), pgProxyDrizzle(async () => ({ rows: [] }))._.session, undefined);
      const refuse = () => fromDrizzle(onProxy);
      expect(refuse).toThrow(ConfigurationError);
      expect(refuse).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION' }));
      expect(refuse).toThrow(
        "fromDrizzle supports Drizzle's node-postgres and PGlite drivers (PostgreSQL), mysql2 (MariaDB/MySQL) and better-sqlite3 (SQLite); " +
          "this PostgreSQL transaction runs on Drizzle's PgRemoteSession",
      );
      const sqliteProxy = sqliteProxyDrizzle(async () => ({ rows: [] }));
      await sqliteProxy.transaction(async (tx) => {
        // @ts-expect-error on SQLite only the tx of betterSqliteTransaction is taken
        expect(() => fromDrizzle(tx)).toThrow(/this SQLite transaction runs on Drizzle's SQLiteRemoteSession/);
      });
      // @ts-expect-error betterSqliteTransaction takes a Drizzle database of the better-sqlite3 driver
      await expect(betterSqliteTransaction(sqliteProxy, async () => undefined)).rejects.toThrow(ConfigurationError);
    });
  });

  describe('on PostgreSQL (node-postgres)', () => {
    const schema = uniqueName('drizzle');
    const notes = pgSchema(schema).table('notes', { id: integer('id').primaryKey(), body: text('body') });
    let pool: pg.Pool;
    let db: NodePgDatabase;
    let outbox: Outbox<unknown, PostgresOutboxStore>;
    let outboxRows: () => Promise<number>;
    beforeAll(async () => {
      pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
      pool.on('error', () => undefined);
      const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
      await store.migrate();
      outbox = new Outbox(store);
      await pool.query(`CREATE TABLE "${schema}".notes (id int PRIMARY KEY, body text)`);
      db = nodePgDrizzle({ client: pool });
      outboxRows = postgresTestControls(async (text, params = []) => (await pool.query(text, params)).rows as Record<string, unknown>[], schema).rowCount;
    });
    afterAll(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    });
    const noteIds = async (ids: number[]) => (await db.select({ id: notes.id }).from(notes).orderBy(notes.id)).map((row) => row.id).filter((id) => ids.includes(id));

    it('passes $n placeholders, a ? operator and PostgreSQL array parameters to the driver untouched, and reads plain rows', async () => {
      const ids = ['0190a3c5-9c4e-7c1a-8d7e-1f2a3b4c5d6e', '0190a3c5-9c4e-7c1a-8d7e-1f2a3b4c5d6f'];
      await db.transaction(async (tx) => {
        const onTx = fromDrizzle(tx);
        expect(onTx.dialect).toBe('postgres');
        const arrays = await onTx.query('SELECT id, n FROM unnest($1::text[], $2::int[]) AS t(id, n) ORDER BY n', [['a', 'b', null], [1, 2, 3]]);
        expect(arrays.rows).toEqual([{ id: 'a', n: 1 }, { id: 'b', n: 2 }, { id: null, n: 3 }]);
        const scalars = await onTx.query(`SELECT '{"a": 1}'::jsonb ? $1 AS has_key, $2::bigint AS big, $3::boolean AS yes, $4::bytea AS bytes, $5::uuid[] AS ids`, [
          'a',
          2n ** 62n,
          true,
          new Uint8Array([0, 255]),
          ids,
        ]);
        expect(scalars.rows).toEqual([{ has_key: true, big: (2n ** 62n).toString(), yes: true, bytes: Buffer.from([0, 255]), ids }]);
      });
    });

    it('runs on the transaction itself: its rows commit and roll back with it, and affectedRows counts them', async () => {
      await db.transaction(async (tx) => {
        const written = await fromDrizzle(tx).query(`INSERT INTO "${schema}".notes (id, body) VALUES ($1, $2), ($3, $4)`, [1, 'kept', 2, 'kept']);
        expect(written).toEqual({ rows: [], affectedRows: 2 });
        expect((await tx.select().from(notes)).map((row) => row.id)).toEqual([1, 2]);
        expect(await noteIds([1, 2])).toEqual([]);
      });
      const rolledBack = db.transaction(async (tx) => {
        await fromDrizzle(tx).query(`INSERT INTO "${schema}".notes (id, body) VALUES ($1, $2)`, [3, 'gone']);
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      expect(await noteIds([1, 2, 3])).toEqual([1, 2]);
    });

    it("prepares a named statement on the transaction's client", async () => {
      await db.transaction(async (tx) => {
        const onTx = fromDrizzle(tx);
        const name = uniqueName('outboxer_drizzle');
        await onTx.query('SELECT $1::int + 1 AS next', [1], { name });
        const prepared = await onTx.query('SELECT statement FROM pg_prepared_statements WHERE name = $1', [name]);
        expect(prepared.rows).toEqual([{ statement: 'SELECT $1::int + 1 AS next' }]);
        expect((await onTx.query('SELECT $1::int + 1 AS next', [41], { name })).rows).toEqual([{ next: 42 }]);
      });
    });

    it("reports node-postgres' transaction status: open, failed after an error (refused), closed once it ended", async () => {
      let kept: OutboxTransaction | undefined;
      await db.transaction(async (tx) => {
        kept = fromDrizzle(tx);
        expect(kept.status?.()).toBe('open');
        // pg rejects at the ErrorResponse; the status ('E') comes with the ReadyForQuery after it
        const client = (tx as unknown as { session: { client: { connection: { once(event: 'readyForQuery', listener: () => void): unknown } } } }).session.client;
        const statusArrived = new Promise<void>((resolve) => client.connection.once('readyForQuery', resolve));
        await expect(kept.query('SELECT 1 / 0', [])).rejects.toThrow(/division by zero/);
        await statusArrived;
        expect(kept.status?.()).toBe('failed');
        await expect(outbox.enqueue(kept, message(1))).rejects.toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringMatching(/failed/) }));
      });
      expect(defined(kept).status?.()).toBe('closed');
      expect(await outboxRows()).toBe(0);
    });

    it('reports closed when a raw COMMIT ended the transaction behind Drizzle, and the store writes nothing', async () => {
      await db.transaction(async (tx) => {
        await tx.execute(sql`commit`);
        const ended = fromDrizzle(tx);
        expect(ended.status?.()).toBe('closed');
        await expect(outbox.enqueue(ended, message(2))).rejects.toThrow(refusedAsNotInTransaction);
      });
      expect(await outboxRows()).toBe(0);
    });

    it('refuses a kept transaction once its pooled client serves another transaction, writing nothing into that one', async () => {
      const single = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
      const onOneClient = nodePgDrizzle({ client: single });
      try {
        let keptTx: PostgresTx | undefined;
        let keptAdapter: OutboxTransaction | undefined;
        await onOneClient.transaction(async (tx) => {
          keptTx = tx;
          keptAdapter = fromDrizzle(tx);
          expect(keptAdapter.status?.()).toBe('open');
        });
        await onOneClient.transaction(async (other) => {
          await other.insert(notes).values({ id: 20, body: 'other' });
          const pid = sql`SELECT pg_backend_pid() AS pid`;
          // the same client, inside the other transaction: the protocol alone would say 'open'
          expect((await defined(keptTx).execute(pid)).rows).toEqual((await other.execute(pid)).rows);
          for (const late of [defined(keptAdapter), fromDrizzle(defined(keptTx))]) {
            expect(late.status?.()).toBe('closed');
            await expect(late.query(`INSERT INTO "${schema}".notes (id, body) VALUES ($1, $2)`, [21, 'late'])).rejects.toThrow(/its client went back to the pool/);
            await expect(outbox.enqueue(late, message(3))).rejects.toThrow(refusedAsNotInTransaction);
          }
        });
      } finally {
        await single.end();
      }
      expect(await noteIds([20, 21])).toEqual([20]);
      expect(await outboxRows()).toBe(0);
    });

    it('takes transactions of a database with a relational schema, and their savepoints', async () => {
      const withSchema = nodePgDrizzle({ client: pool, schema: { notes } });
      await withSchema.transaction(async (tx) => {
        expect(fromDrizzle(tx).dialect).toBe('postgres');
        await tx.transaction(async (savepoint) => {
          expect(fromDrizzle(savepoint).status?.()).toBe('open');
        });
      });
    });
  });

  describe('on PGlite', () => {
    const schema = uniqueName('drizzle');
    const notes = pgSchema(schema).table('notes', { id: integer('id').primaryKey(), body: text('body') });
    let pglite: PGlite;
    let db: PgliteDatabase;
    let outbox: Outbox<unknown, PostgresOutboxStore>;
    let outboxRows: () => Promise<number>;
    beforeAll(async () => {
      pglite = await pgliteInstance();
      const store = new PostgresOutboxStore(fromPglite(pglite), { schema });
      await store.migrate();
      outbox = new Outbox(store);
      await pglite.exec(`CREATE TABLE "${schema}".notes (id int PRIMARY KEY, body text)`);
      db = pgliteDrizzle({ client: pglite });
      outboxRows = postgresTestControls(async (text, params = []) => (await pglite.query<Record<string, unknown>>(text, params)).rows, schema).rowCount;
    });
    afterAll(async () => void (await pglite.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)));

    it('binds PostgreSQL arrays, bigints and bytes on the transaction itself, rolled back with it', async () => {
      const rolledBack = db.transaction(async (tx) => {
        const onTx = fromDrizzle(tx);
        expect(onTx.dialect).toBe('postgres');
        const arrays = await onTx.query('SELECT id, n FROM unnest($1::text[], $2::int[]) AS t(id, n) ORDER BY n', [['a', 'b', null], [1, 2, 3]]);
        expect(arrays.rows).toEqual([{ id: 'a', n: 1 }, { id: 'b', n: 2 }, { id: null, n: 3 }]);
        const scalars = await onTx.query('SELECT $1::bigint::text AS big, $2::boolean AS yes, $3::bytea AS bytes', [2n ** 62n, true, new Uint8Array([0, 255])]);
        expect(scalars.rows).toEqual([{ big: (2n ** 62n).toString(), yes: true, bytes: new Uint8Array([0, 255]) }]);
        expect(await onTx.query(`INSERT INTO "${schema}".notes (id, body) VALUES ($1, $2)`, [1, 'gone'])).toEqual({ rows: [], affectedRows: 1 });
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      expect(await db.select().from(notes)).toEqual([]);
    });

    it('leaves the status to the store while PGlite counts the transaction open, and reports closed once it ended', async () => {
      let kept: OutboxTransaction | undefined;
      await db.transaction(async (tx) => {
        kept = fromDrizzle(tx);
        expect(kept.status?.()).toBeUndefined();
        expect(await outbox.enqueue(kept, message(1))).toBeTypeOf('string');
      });
      expect(defined(kept).status?.()).toBe('closed');
      await expect(outbox.enqueue(defined(kept), message(2))).rejects.toThrow(refusedAsNotInTransaction);
      expect(await outboxRows()).toBe(1);
    });

    it("refuses, by the store's probe in the database, a transaction a raw COMMIT ended behind PGlite", async () => {
      const before = await outboxRows();
      await db.transaction(async (tx) => {
        await tx.execute(sql`commit`);
        const ended = fromDrizzle(tx);
        expect(ended.status?.()).toBeUndefined();
        await expect(outbox.enqueue(ended, message(3))).rejects.toThrow(refusedAsNotInTransaction);
      });
      expect(await outboxRows()).toBe(before);
    });
  });

  describe('on MariaDB (mysql2)', () => {
    const notes = mysqlTable('notes', { id: int('id').primaryKey(), body: mysqlText('body') });
    let fresh: FreshMysqlDatabase;
    let db: MySql2Database;
    let outbox: Outbox<unknown, MysqlOutboxStore>;
    let outboxRows: () => Promise<number>;
    beforeAll(async () => {
      fresh = await freshMysqlDatabase('drizzle');
      const store = new MysqlOutboxStore(fresh.database);
      await store.migrate();
      outbox = new Outbox(store);
      await fresh.sql('CREATE TABLE notes (id int PRIMARY KEY, body text, bytes blob)');
      db = mysql2Drizzle({ client: fresh.pool });
      outboxRows = mysqlTestControls(fresh.sql).rowCount;
    });
    afterAll(() => fresh.cleanup());
    const noteIds = async () => (await db.select({ id: notes.id }).from(notes).orderBy(notes.id)).map((row) => row.id);

    it('runs ? placeholders with scalar and binary parameters on the transaction itself, committed with it', async () => {
      await db.transaction(async (tx) => {
        const onTx = fromDrizzle(tx);
        expect(onTx.dialect).toBe('mysql');
        const written = await onTx.query('INSERT INTO notes (id, body, bytes) VALUES (?, ?, ?)', [1, 'a ? in text', new Uint8Array([0, 255])]);
        expect(written).toEqual({ rows: [], affectedRows: 1 });
        const read = await onTx.query('SELECT body, bytes, ? AS big, ? AS yes, @@in_transaction AS in_transaction FROM notes WHERE id = ?', [12_345_678_901n, true, 1]);
        expect(read.rows).toEqual([{ body: 'a ? in text', bytes: Buffer.from([0, 255]), big: '12345678901', yes: 1, in_transaction: '1' }]);
        expect(await noteIds()).toEqual([]);
      });
      expect(await noteIds()).toEqual([1]);
    });

    it('vouches for nothing (each write carries its own proof): an enqueue after a raw COMMIT, or on a transaction that ended, is refused', async () => {
      let kept: OutboxTransaction | undefined;
      await db.transaction(async (tx) => {
        kept = fromDrizzle(tx);
        expect(kept.status).toBeUndefined();
      });
      await expect(outbox.enqueue(defined(kept), message(2))).rejects.toThrow(refusedAsNotInTransaction);
      await db.transaction(async (tx) => {
        await tx.execute(sql`commit`);
        await expect(outbox.enqueue(fromDrizzle(tx), message(1))).rejects.toThrow(refusedAsNotInTransaction);
      });
      expect(await outboxRows()).toBe(0);
    });
  });

  describe('on SQLite (better-sqlite3), through betterSqliteTransaction', () => {
    const notes = sqliteTable('notes', { id: sqliteInteger('id').primaryKey(), body: sqliteText('body') });
    let file: FreshSqliteFile;
    let db: BetterSQLite3Database;
    let outbox: Outbox<unknown, SqliteOutboxStore>;
    let outboxRows: () => Promise<number>;
    let noteIds: () => Promise<number[]>;
    beforeAll(async () => {
      file = freshSqliteFile('drizzle');
      const store = new SqliteOutboxStore(file.database());
      await store.migrate();
      outbox = new Outbox(store);
      const plain = file.database();
      await plain.write(() => void plain.run('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, bytes BLOB, flag INTEGER)'));
      db = betterSqliteDrizzle({ client: file.connect() });
      outboxRows = sqliteTestControls(plain).rowCount;
      noteIds = () => plain.read(() => plain.all('SELECT id FROM notes ORDER BY id').map((row) => Number(row.id)));
    });
    afterAll(() => file.cleanup());

    it('runs ? placeholders with booleans, bigints and bytes on the transaction itself, rolled back with it', async () => {
      const rolledBack = betterSqliteTransaction(db, async (tx) => {
        const onTx = fromDrizzle(tx);
        expect(onTx.dialect).toBe('sqlite');
        const written = await onTx.query('INSERT INTO notes (id, body, bytes, flag) VALUES (?, ?, ?, ?)', [2n, 'x', new Uint8Array([0, 255]), true]);
        expect(written).toEqual({ rows: [], affectedRows: 1 });
        const read = await onTx.query('SELECT id, body, bytes, flag FROM notes', []);
        expect(read).toEqual({ rows: [{ id: 2, body: 'x', bytes: Buffer.from([0, 255]), flag: 1 }], affectedRows: 0 });
        const returning = await onTx.query('UPDATE notes SET flag = ? WHERE id = ? RETURNING id', [false, 2]);
        expect(returning).toEqual({ rows: [{ id: 2 }], affectedRows: 1 });
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      expect(await noteIds()).toEqual([]);
    });

    it('is open while its transaction runs and closed once it ended; a raw COMMIT closes it too', async () => {
      let kept: OutboxTransaction | undefined;
      await betterSqliteTransaction(db, async (tx) => {
        kept = fromDrizzle(tx);
        expect(kept.status?.()).toBe('open');
      });
      expect(defined(kept).status?.()).toBe('closed');
      await expect(defined(kept).query('SELECT 1', [])).rejects.toThrow(/whose transaction already ended/);
      const endedByRawCommit = betterSqliteTransaction(db, async (tx) => {
        tx.run(sql`commit`);
        const ended = fromDrizzle(tx);
        expect(ended.status?.()).toBe('closed');
        await expect(outbox.enqueue(ended, message(1))).rejects.toThrow(refusedAsNotInTransaction);
      });
      await expect(endedByRawCommit).rejects.toThrow(/no transaction is active/);
      expect(await outboxRows()).toBe(0);
    });

    it('nests savepoints: an inner rollback undoes only the inner work, and an ended savepoint cannot be nested in', async () => {
      let endedSavepoint: DrizzleBetterSqliteTransaction | undefined;
      await betterSqliteTransaction(db, async (tx) => {
        await tx.insert(notes).values({ id: 10 });
        const inner = betterSqliteTransaction(tx, async (savepoint) => {
          await savepoint.insert(notes).values({ id: 11 });
          await outbox.enqueue(fromDrizzle(savepoint), message(11));
          throw new Error('inner only');
        });
        await expect(inner).rejects.toThrow('inner only');
        await betterSqliteTransaction(tx, async (savepoint) => {
          endedSavepoint = savepoint;
          await savepoint.insert(notes).values({ id: 12 });
        });
        expect(fromDrizzle(defined(endedSavepoint)).status?.()).toBe('closed');
        await expect(betterSqliteTransaction(defined(endedSavepoint), async () => undefined)).rejects.toThrow(refusedAsNotInTransaction);
        expect(fromDrizzle(tx).status?.()).toBe('open');
      });
      expect(await noteIds()).toEqual(expect.arrayContaining([10, 12]));
      expect(await noteIds()).not.toContain(11);
      expect(await outboxRows()).toBe(0);
    });

    it('runs transactions on one connection one after another, each whole', async () => {
      const events: string[] = [];
      const run = (name: string, id: number) =>
        betterSqliteTransaction(db, async (tx) => {
          events.push(`${name} begins`);
          await tx.insert(notes).values({ id });
          await new Promise((resolve) => setImmediate(resolve));
          await outbox.enqueue(fromDrizzle(tx), message(id));
          events.push(`${name} ends`);
        });
      await Promise.all([run('a', 40), run('b', 41)]);
      expect(events).toEqual(['a begins', 'a ends', 'b begins', 'b ends']);
      expect(await noteIds()).toEqual(expect.arrayContaining([40, 41]));
      expect(await outboxRows()).toBe(2);
    });

    it('refuses a second transaction on the root database inside one on the same connection (it would wait forever); the outer one commits', async () => {
      await betterSqliteTransaction(db, async (tx) => {
        await expect(betterSqliteTransaction(db, async () => undefined)).rejects.toThrow(
          /inside another betterSqliteTransaction on the same connection.*betterSqliteTransaction\(tx, async \(inner\) => \.\.\.\)/,
        );
        await tx.insert(notes).values({ id: 50 });
      });
      expect(await noteIds()).toContain(50);
    });

    it("begins once another connection's write transaction committed", async () => {
      const other = file.connect();
      other.exec('BEGIN IMMEDIATE');
      other.prepare('INSERT INTO notes (id) VALUES (60)').run();
      const ours = betterSqliteTransaction(db, async (tx) => (await tx.select().from(notes).where(eq(notes.id, 60))).length);
      // the other connection holds the write lock past a few of our BEGIN IMMEDIATE attempts
      await new Promise((resolve) => setTimeout(resolve, 50));
      other.exec('COMMIT');
      expect(await ours).toBe(1);
    });
  });
});

class Rollback extends Error {}

/** The enqueue-not-awaited sweep on one Drizzle driver; `rawRollback` ends the transaction with SQL Drizzle does not see. */
function describeFloatingEnqueue<Tx>(name: string, open: () => Promise<DrizzleDatabase<Tx>>, rawRollback: (tx: Tx) => Promise<unknown>): void {
  describe(`fromDrizzle on ${name}: an enqueue not awaited, then the transaction rolls back`, () => {
    let database: DrizzleDatabase<Tx> | undefined;
    afterEach(async () => {
      await database?.close();
      database = undefined;
    });
    const floatingRig = async (rollBack: (tx: Tx) => Promise<void>): Promise<FloatingEnqueueRig> => {
      const current = (database = await open());
      return {
        outbox: new Outbox(current.store as unknown as StoreForOutbox<OutboxTransaction>),
        rowCount: () => current.controls.rowCount(),
        rollBackAfter: (turns, enqueue) =>
          current
            .begin(async (tx) => {
              enqueue(current.adapt(tx));
              await microtaskTurns(turns);
              await rollBack(tx);
            })
            .then(
              () => expect.fail('the transaction was to roll back'),
              () => undefined,
            ),
        commit: (work) => current.begin((tx) => work(current.adapt(tx))),
      };
    };
    const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
    // Drizzle still counts the transaction open: only the driver knows it ended
    const behindDrizzle = async (tx: Tx) => {
      await rawRollback(tx);
      throw new Rollback('and let Drizzle end it too');
    };

    it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {

      await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));

    });


    for (const idempotent of [false, true]) {
      const keyed = idempotent ? ' (with an idempotency key)' : '';
      it(`commits nothing when the callback throws right after it${keyed}`, async () => {
        await expectNothingCommittedAlone(await floatingRig(throwFromCallback), { idempotent });
      });
      it(`commits nothing when a raw ROLLBACK ends the transaction behind Drizzle${keyed}`, async () => {
        await expectNothingCommittedAlone(await floatingRig(behindDrizzle), { idempotent });
      });
    }
  });
}

describeFloatingEnqueue('node-postgres', postgresDatabase, (tx) => tx.execute(sql`rollback`));
describeFloatingEnqueue('PGlite', pgliteDatabase, (tx) => tx.execute(sql`rollback`));
describeFloatingEnqueue('mysql2 (MariaDB)', mariadbDatabase, (tx) => tx.execute(sql`rollback`));
describeFloatingEnqueue('better-sqlite3 (betterSqliteTransaction)', sqliteDatabase, async (tx) => tx.run(sql`rollback`));
