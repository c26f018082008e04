/**
 * The Kysely rigs of the adapter suites: a database per test with Kysely over it, and the conformance harness of
 * each transaction style. adapters-kysely.test.ts and adapters-kysely-specifics.test.ts run on them.
 */
import { CamelCasePlugin, Kysely, MysqlDialect, PostgresDialect, sql, SqliteDialect, type ControlledTransaction, type Transaction } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { fromKysely } from '../../src/adapters/kysely/index.js';
import type { SqlDialect } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import type { AdapterDatabase, AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { mysqlTestControls } from '../support/dialects/mariadb/mysql-test-controls.js';
import { postgresTestControls } from '../support/dialects/postgres/postgres-test-controls.js';
import { sqliteTestControls } from '../support/dialects/sqlite/sqlite-test-controls.js';

/** The application's tables as Kysely sees them. */
export interface Shop {
  orders: { id: number; note: string };
}

/**
 * One database with the outbox migrated and an `orders` table, and Kysely over it as an application configures it:
 * CamelCasePlugin on (the adapter must still read rows by column name) and, on PostgreSQL, `withSchema`.
 */
export interface KyselyBackend {
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

export const kyselyBackends: Readonly<Record<'postgres' | 'mariadb' | 'sqlite', () => Promise<KyselyBackend>>> = {
  postgres: postgresBackend,
  mariadb: mariadbBackend,
  sqlite: sqliteBackend,
};

function contextOf(trx: Transaction<Shop>): OrmTransactionContext {
  return {
    tx: fromKysely(trx),
    async insertOrder(id) {
      await trx
        .insertInto('orders')
        .values({ id, note: `order ${id}` })
        .execute();
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

export function kyselyHarness(database: keyof typeof kyselyBackends, style: TransactionStyle): AdapterHarness {
  return {
    orm: style === 'execute' ? 'Kysely (db.transaction().execute)' : 'Kysely (db.startTransaction)',
    database,
    async setup(): Promise<AdapterRig> {
      const backend = await kyselyBackends[database]();
      const { db } = backend;
      const held: ControlledTransaction<Shop>[] = [];
      const controlledOf = new WeakMap<OrmTransactionContext, ControlledTransaction<Shop>>();
      const controlledContext = (trx: ControlledTransaction<Shop>) => {
        const context = contextOf(trx);
        controlledOf.set(context, trx);
        return context;
      };
      const transaction = <T>(work: (context: OrmTransactionContext) => Promise<T>): Promise<T> =>
        style === 'execute' ? db.transaction().execute((trx) => work(contextOf(trx))) : inControlledTransaction(db, (trx) => work(controlledContext(trx)));
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
        orderExists: async (id) =>
          (await backend.sql(`SELECT id FROM ${backend.orders} WHERE id = ${backend.dialect === 'postgres' ? '$1' : '?'}`, [id])).length === 1,
        async cleanup() {
          // the raw COMMIT left no transaction: a ROLLBACK is only for Kysely to release the connection
          await Promise.all(
            held.map((trx) =>
              trx
                .rollback()
                .execute()
                .catch(() => undefined),
            ),
          );
          await backend.cleanup();
        },
      };
    },
  };
}
