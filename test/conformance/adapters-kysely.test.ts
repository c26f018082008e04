import {
  CamelCasePlugin,
  DummyDriver,
  Kysely,
  MssqlAdapter,
  MssqlIntrospector,
  MssqlQueryCompiler,
  MysqlDialect,
  PostgresDialect,
  sql,
  SqliteDialect,
  type ControlledTransaction,
  type Transaction,
} from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { fromKysely } from '../../src/adapters/kysely/index.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction, SqlDialect } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import type { AdapterDatabase, AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { expectNothingCommittedAlone, expectVouchedOnlyWhereOpen, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { mysqlTestControls } from './mysql-test-controls.js';
import { postgresTestControls } from './postgres-test-controls.js';
import { sqliteTestControls } from './sqlite-test-controls.js';

/** The application's tables as Kysely sees them. */
interface Shop {
  orders: { id: number; note: string };
}

/**
 * One database with the outbox migrated and an `orders` table, and Kysely over it as an application configures it:
 * CamelCasePlugin on (the adapter must still read rows by column name) and, on PostgreSQL, `withSchema`.
 */
interface KyselyBackend {
  readonly database: AdapterDatabase;
  readonly dialect: SqlDialect;
  readonly db: Kysely<Shop>;
  /** The orders table as plain SQL names it (schema-qualified on PostgreSQL, where Kysely adds the schema itself). */
  readonly orders: string;
  /** Another Kysely instance on the same database, with connections of its own. */
  openKysely(): Kysely<Shop>;
  readonly store: AdapterRig['store'];
  readonly controls: AdapterRig['controls'];
  /** Plain SQL outside any transaction, in the dialect's placeholders. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

const plugins = [new CamelCasePlugin()];

async function postgresBackend(): Promise<KyselyBackend> {
  const schema = uniqueName('ky');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  pool.on('error', () => undefined);
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
  await store.migrate();
  await pool.query(`CREATE TABLE "${schema}".orders (id int PRIMARY KEY, note text NOT NULL)`);
  const sqlOf = async (text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as Record<string, unknown>[];
  const opened: Kysely<Shop>[] = [];
  const openKysely = () => {
    const kyselyPool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
    kyselyPool.on('error', () => undefined);
    const db = new Kysely<Shop>({ dialect: new PostgresDialect({ pool: kyselyPool }), plugins }).withSchema(schema);
    opened.push(db);
    return db;
  };
  return {
    database: 'postgres',
    dialect: 'postgres',
    db: openKysely(),
    orders: `"${schema}".orders`,
    openKysely,
    store,
    controls: postgresTestControls(sqlOf, schema),
    sql: sqlOf,
    async cleanup() {
      await Promise.all(opened.map((db) => db.destroy()));
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

async function mariadbBackend(): Promise<KyselyBackend> {
  const fresh = await freshMysqlDatabase('ky');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  await fresh.sql('CREATE TABLE orders (id INT PRIMARY KEY, note TEXT NOT NULL)');
  const opened: Kysely<Shop>[] = [];
  const openKysely = () => {
    // mysql2's callback pool with its defaults, as Kysely's MysqlDialect takes it
    const db = new Kysely<Shop>({ dialect: new MysqlDialect({ pool: createPool({ uri: fresh.url, connectionLimit: 4 }) }), plugins });
    opened.push(db);
    return db;
  };
  return {
    database: 'mariadb',
    dialect: 'mysql',
    db: openKysely(),
    orders: 'orders',
    openKysely,
    store,
    controls: mysqlTestControls(fresh.sql),
    sql: fresh.sql,
    async cleanup() {
      await Promise.all(opened.map((db) => db.destroy()));
      await fresh.cleanup();
    },
  };
}

async function sqliteBackend(): Promise<KyselyBackend> {
  const file = freshSqliteFile('ky');
  const store = new SqliteOutboxStore(file.database());
  await store.migrate();
  const plain = file.database();
  await plain.write(() => plain.run('CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT NOT NULL)'));
  const opened: Kysely<Shop>[] = [];
  const openKysely = () => {
    const connection = file.connect();
    // the application's connection waits for the relay's writes as better-sqlite3 does by default (the file's own are 20 ms)
    connection.pragma('busy_timeout = 5000');
    const db = new Kysely<Shop>({ dialect: new SqliteDialect({ database: connection }), plugins });
    opened.push(db);
    return db;
  };
  return {
    database: 'sqlite',
    dialect: 'sqlite',
    db: openKysely(),
    orders: 'orders',
    openKysely,
    store,
    controls: sqliteTestControls(plain),
    sql: (text, params = []) => plain.read(() => plain.all(text, params)),
    async cleanup() {
      await Promise.all(opened.map((db) => db.destroy()));
      await file.cleanup();
    },
  };
}

const backends: Readonly<Record<'postgres' | 'mariadb' | 'sqlite', () => Promise<KyselyBackend>>> = {
  postgres: postgresBackend,
  mariadb: mariadbBackend,
  sqlite: sqliteBackend,
};

function contextOf(trx: Transaction<Shop>): OrmTransactionContext {
  return {
    tx: fromKysely(trx),
    async insertOrder(id) {
      await trx.insertInto('orders').values({ id, note: `order ${id}` }).execute();
    },
  };
}

/** Runs `work` in `db.startTransaction()`: committed when it resolves, rolled back when it rejects. */
async function inControlledTransaction<T>(db: Kysely<Shop>, work: (trx: ControlledTransaction<Shop>) => Promise<T>): Promise<T> {
  const trx = await db.startTransaction().execute();
  try {
    const result = await work(trx);
    await trx.commit().execute();
    return result;
  } catch (error) {
    await trx.rollback().execute();
    throw error;
  }
}

/**
 * The handles a user might pass by mistake. The first two are refused by `fromKysely` itself; the kept
 * transactions by Kysely (0.28.11+) or their status; the last by the store's probe in the database, since Kysely
 * still calls that transaction active.
 */
async function mistakesOf(backend: KyselyBackend, held: ControlledTransaction<Shop>[]) {
  const { db } = backend;
  let keptConnection: Kysely<Shop> | undefined;
  await db.connection().execute(async (connection) => {
    keptConnection = connection;
  });
  let committed: Transaction<Shop> | undefined;
  await db.transaction().execute(async (trx) => {
    committed = trx;
  });
  let rolledBack: Transaction<Shop> | undefined;
  await db
    .transaction()
    .execute(async (trx) => {
      rolledBack = trx;
      throw new Error('roll back');
    })
    .catch(() => undefined);
  const controlledCommitted = await db.startTransaction().execute();
  await controlledCommitted.commit().execute();
  const controlledRolledBack = await db.startTransaction().execute();
  await controlledRolledBack.rollback().execute();
  // on an instance of its own: on SQLite, a controlled transaction holds its Kysely's only connection until it ends
  const endedBehindKysely = await backend.openKysely().startTransaction().execute();
  held.push(endedBehindKysely);
  await sql`commit`.execute(endedBehindKysely);
  return [
    // @ts-expect-error the root Kysely instance is not a transaction
    { name: 'the root db', handle: () => fromKysely(db) },
    // @ts-expect-error a db.connection() handle is not a transaction either
    { name: 'a db.connection() handle', handle: () => fromKysely(keptConnection) },
    { name: 'a transaction kept after execute() committed it', handle: () => fromKysely(committed as Transaction<Shop>) },
    { name: 'a transaction kept after execute() rolled it back', handle: () => fromKysely(rolledBack as Transaction<Shop>) },
    { name: 'a controlled transaction after commit()', handle: () => fromKysely(controlledCommitted) },
    { name: 'a controlled transaction after rollback()', handle: () => fromKysely(controlledRolledBack) },
    { name: 'a controlled transaction ended by a raw COMMIT (Kysely still calls it active)', handle: () => fromKysely(endedBehindKysely) },
  ];
}

type TransactionStyle = 'execute' | 'controlled';

function kyselyHarness(database: keyof typeof backends, style: TransactionStyle): AdapterHarness {
  return {
    orm: style === 'execute' ? 'Kysely (db.transaction().execute)' : 'Kysely (db.startTransaction)',
    database,
    async setup(): Promise<AdapterRig> {
      const backend = await backends[database]();
      const { db } = backend;
      const held: ControlledTransaction<Shop>[] = [];
      const controlledOf = new WeakMap<OrmTransactionContext, ControlledTransaction<Shop>>();
      const controlledContext = (trx: ControlledTransaction<Shop>) => {
        const context = contextOf(trx);
        controlledOf.set(context, trx);
        return context;
      };
      const transaction = <T>(work: (context: OrmTransactionContext) => Promise<T>): Promise<T> =>
        style === 'execute'
          ? db.transaction().execute((trx) => work(contextOf(trx)))
          : inControlledTransaction(db, (trx) => work(controlledContext(trx)));
      return {
        store: backend.store,
        controls: backend.controls,
        transaction,
        nested:
          style === 'execute'
            ? null
            : async (outer, inner) => {
                const trx = controlledOf.get(outer);
                if (trx === undefined) throw new Error('nested() was given a context of another transaction');
                const savepoint = await trx.savepoint('outboxer_nested').execute();
                try {
                  const result = await inner(controlledContext(savepoint as unknown as ControlledTransaction<Shop>));
                  await savepoint.releaseSavepoint('outboxer_nested').execute();
                  return result;
                } catch (error) {
                  await savepoint.rollbackToSavepoint('outboxer_nested').execute();
                  throw error;
                }
              },
        mistakes: () => mistakesOf(backend, held),
        runThroughOutbox: (outboxTransaction, work) => outboxTransaction(() => transaction(work)),
        orderExists: async (id) => (await backend.sql(`SELECT id FROM ${backend.orders} WHERE id = ${backend.dialect === 'postgres' ? '$1' : '?'}`, [id])).length === 1,
        async cleanup() {
          // the raw COMMIT left no transaction: a ROLLBACK is only for Kysely to release the connection
          await Promise.all(held.map((trx) => trx.rollback().execute().catch(() => undefined)));
          await backend.cleanup();
        },
      };
    },
  };
}

for (const database of ['postgres', 'mariadb', 'sqlite'] as const) {
  describeAdapterConformance(kyselyHarness(database, 'execute'));
  describeAdapterConformance(kyselyHarness(database, 'controlled'));
}

describe.each(['postgres', 'mariadb', 'sqlite'] as const)('fromKysely on %s', (database) => {
  let backend: KyselyBackend | undefined;
  afterEach(async () => {
    await backend?.cleanup();
    backend = undefined;
  });
  const setup = async () => (backend = await backends[database]());

  it('refuses the root db at once, naming the fix, and its types refuse it too', async () => {
    const { db } = await setup();
    // @ts-expect-error the root Kysely instance declares isTransaction: boolean, a transaction true
    const attempt = () => fromKysely(db);
    expect(attempt).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
    expect(attempt).toThrow(/not a transaction.*db\.transaction\(\)\.execute.*fromKysely\(trx\)/);
    expect(() => fromKysely({} as never)).toThrow(/fromKysely was given an object \(Object\), not a Kysely transaction/);
  });

  it("tells the database from the dialect and runs statements on the transaction's own connection, rows keyed by column", async () => {
    const { db, dialect, orders } = await setup();
    const placeholder = dialect === 'postgres' ? '$1' : '?';
    const seen = await db.transaction().execute(async (trx) => {
      await trx.insertInto('orders').values({ id: 5, note: 'five' }).execute();
      const tx = fromKysely(trx);
      expect(tx.dialect).toBe(dialect);
      expect(tx.source).toBe('a Kysely transaction');
      const updated = await tx.query(`UPDATE ${orders} SET note = ${placeholder} WHERE id = 5`, ['changed']);
      expect(updated).toEqual({ rows: [], affectedRows: 1 });
      const { rows } = await tx.query(`SELECT id, note AS order_note FROM ${orders} WHERE id = ${placeholder}`, [5]);
      return rows;
    });
    // the uncommitted row was visible, and CamelCasePlugin did not rename order_note
    expect(seen).toEqual([{ id: 5, order_note: 'changed' }]);
  });

  it('binds the scalars the port allows, and on PostgreSQL arrays as arrays', async () => {
    const { db, dialect } = await setup();
    const bytes = Uint8Array.from([0, 1, 255]);
    const rows = await db.transaction().execute(async (trx) => {
      const tx = fromKysely(trx);
      if (dialect === 'postgres') {
        return (
          await tx.query('SELECT cardinality($1::text[]) AS n, $2::uuid[] AS ids, $3::bytea AS bytes, $4::boolean AS yes, $5::int8 AS big', [
            ['a', null, 'c'],
            ['0190a0d8-0000-7000-8000-000000000000'],
            bytes,
            true,
            9007199254740993n,
          ])
        ).rows;
      }
      const asText = dialect === 'mysql' ? 'CAST(? AS CHAR)' : 'CAST(? AS TEXT)';
      return (await tx.query(`SELECT ? AS yes, ? AS no, ? AS bytes, ${asText} AS big, ? AS absent`, [true, false, bytes, 9007199254740993n, null])).rows;
    });
    if (dialect === 'postgres') {
      expect(rows).toEqual([{ n: 3, ids: ['0190a0d8-0000-7000-8000-000000000000'], bytes: Buffer.from(bytes), yes: true, big: '9007199254740993' }]);
    } else {
      expect(rows).toEqual([{ yes: 1, no: 0, bytes: Buffer.from(bytes), big: '9007199254740993', absent: null }]);
    }
  });

  it("says 'closed' for a controlled transaction once committed or rolled back; vouches for an open one only as SQLite itself says it", async () => {
    const { db } = await setup();
    // on PostgreSQL and MariaDB, Kysely's "active" is no proof: the store asks the database
    const openStatus = database === 'sqlite' ? 'open' : undefined;
    let insideStatus: unknown;
    const executed = await db.transaction().execute(async (trx) => {
      const tx = fromKysely(trx);
      insideStatus = await tx.status?.();
      return tx;
    });
    expect(insideStatus).toBe(openStatus);
    if (database === 'sqlite') expect(await executed.status?.()).toBe('closed');
    else expect(executed.status).toBeUndefined();
    const committed = await db.startTransaction().execute();
    const open = fromKysely(committed);
    expect(open.source).toBe('a Kysely controlled transaction');
    expect(await open.status?.()).toBe(openStatus);
    await committed.commit().execute();
    expect(await open.status?.()).toBe('closed');
    const rolledBack = await db.startTransaction().execute();
    await rolledBack.rollback().execute();
    expect(await fromKysely(rolledBack).status?.()).toBe('closed');
  });

  if (database === 'sqlite') {
    it("says 'closed' once a raw COMMIT ended the transaction behind Kysely, and leaves the connection outside any transaction", async () => {
      const { db } = await setup();
      const trx = await db.startTransaction().execute();
      try {
        await sql`commit`.execute(trx);
        expect(trx.isCommitted).toBe(false);
        const tx = fromKysely(trx);
        expect(await tx.status?.()).toBe('closed');
        await expect(tx.query('SELECT 1 AS one', [], { vouched: true })).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
        // the BEGIN that asked was rolled back at once: a transaction still begins on the connection
        await sql`begin`.execute(trx);
        await sql`rollback`.execute(trx);
      } finally {
        await trx.rollback().execute().catch(() => undefined);
      }
    });
  }

  it('refuses a statement on a transaction kept after execute() returned, before anything is sent', async () => {
    const { db } = await setup();
    let kept: Transaction<Shop> | undefined;
    await db.transaction().execute(async (trx) => {
      kept = trx;
    });
    const tx = fromKysely(kept as Transaction<Shop>);
    await expect(tx.query('SELECT 1 AS one', [])).rejects.toMatchObject({
      code: 'OUTBOXER_NOT_IN_TRANSACTION',
      message: expect.stringMatching(/already committed .*fromKysely\(trx\)/),
    });
  });
});

describe('fromKysely on a database outboxer has no store for', () => {
  it('names the supported dialects (MSSQL compiles @1 placeholders)', async () => {
    const mssql = new Kysely<Shop>({
      dialect: {
        createAdapter: () => new MssqlAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new MssqlIntrospector(db),
        createQueryCompiler: () => new MssqlQueryCompiler(),
      },
    });
    const attempt = mssql.transaction().execute(async (trx) => fromKysely(trx));
    await expect(attempt).rejects.toMatchObject({
      code: 'OUTBOXER_INVALID_OPTION',
      message: expect.stringMatching(/PostgresDialect, MysqlDialect \(MariaDB or MySQL\) and SqliteDialect.*select @1 as/),
    });
  });
});

class Rollback extends Error {}

describe.each(['postgres', 'mariadb', 'sqlite'] as const)('fromKysely on %s: an enqueue not awaited, then the transaction rolls back', (database) => {
  let backend: KyselyBackend | undefined;
  afterEach(async () => {
    await backend?.cleanup();
    backend = undefined;
  });
  const floatingRig = async (rollBack: (trx: Transaction<Shop>) => Promise<void>): Promise<FloatingEnqueueRig> => {
    const { db, store, controls } = (backend = await backends[database]());
    return {
      outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
      rowCount: () => controls.rowCount(),
      rollBackAfter: (turns, enqueue) =>
        db
          .transaction()
          .execute(async (trx) => {
            enqueue(fromKysely(trx));
            await microtaskTurns(turns);
            await rollBack(trx);
          })
          .then(
            () => expect.fail('the transaction was to roll back'),
            () => undefined,
          ),
      commit: (work) => db.transaction().execute((trx) => work(fromKysely(trx))),
    };
  };
  const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
  // Kysely still counts the transaction open: only the driver knows it ended
  const rawRollback = async (trx: Transaction<Shop>) => {
    await sql`rollback`.execute(trx);
    throw new Rollback('and let Kysely end it too');
  };

  it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {

    await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));

  });


  for (const idempotent of [false, true]) {
    const keyed = idempotent ? ' (with an idempotency key)' : '';
    it(`commits nothing when the callback throws right after it${keyed}`, async () => {
      await expectNothingCommittedAlone(await floatingRig(throwFromCallback), { idempotent });
    });
    it(`commits nothing when a raw ROLLBACK ends the transaction behind Kysely${keyed}`, async () => {
      await expectNothingCommittedAlone(await floatingRig(rawRollback), { idempotent });
    });
  }
});
