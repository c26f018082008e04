/**
 * The Prisma rigs of the adapter suites: a database per test with a Prisma client on it, and the conformance harness.
 * The clients are generated, not committed: a test file using these rigs calls ensureTestPrismaClients() in a beforeAll.
 */
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import pg from 'pg';
import { fromPrisma, type PrismaTransactionClient } from '../../src/adapters/prisma/index.js';
import type { SqlDialect } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { prismaClientDirectories, type PrismaProvider } from '../support/prisma/prisma-clients.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import type { AdapterDatabase, AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { mysqlTestControls } from '../support/dialects/mariadb/mysql-test-controls.js';
import { postgresTestControls } from '../support/dialects/postgres/postgres-test-controls.js';
import { sqliteTestControls } from '../support/dialects/sqlite/sqlite-test-controls.js';

/** The transaction client of the generated `Order (id, note)` schema, as the rigs use it on every provider. */
export interface ShopTransaction extends PrismaTransactionClient {
  readonly order: { create(args: { data: { id: number; note: string } }): PromiseLike<unknown> };
  $transaction<R>(work: (tx: ShopTransaction) => Promise<R>): Promise<R>;
}

/** The root client of that schema: a `new PrismaClient({ adapter })` of the provider's generated code. */
export interface ShopClient {
  $transaction<R>(work: (tx: ShopTransaction) => Promise<R>, options?: { timeout?: number }): Promise<R>;
  $extends(extension: { name: string }): ShopClient;
  $disconnect(): Promise<void>;
}

type DriverAdapter = PrismaPg | PrismaMariaDb | PrismaBetterSqlite3;

/** Generous: a loaded test machine must not roll a conformance transaction back under Prisma's 5 s default. */
const transactionOptions = { maxWait: 30_000, timeout: 30_000 };

/** The generated client of a provider, loaded once generated (it is no file of the repository). */
async function loadClient(provider: PrismaProvider): Promise<(adapter: DriverAdapter) => ShopClient> {
  const module = (await import(pathToFileURL(join(prismaClientDirectories.test(provider), 'client.ts')).href)) as {
    PrismaClient: new (options: { adapter: DriverAdapter; transactionOptions: typeof transactionOptions }) => ShopClient;
  };
  return (adapter) => new module.PrismaClient({ adapter, transactionOptions });
}

/** One database with the outbox migrated and an `orders` table, and a Prisma client on it through its driver adapter. */
export interface PrismaBackend {
  readonly database: AdapterDatabase;
  readonly dialect: SqlDialect;
  readonly prisma: ShopClient;
  /** The `orders` table as raw SQL names it (Prisma's `schema` option qualifies only its own statements). */
  readonly orders: string;
  readonly store: AdapterRig['store'];
  readonly controls: AdapterRig['controls'];
  /** Plain SQL outside any transaction, in the dialect's placeholders. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

async function postgresBackend(): Promise<PrismaBackend> {
  const schema = uniqueName('prisma');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  pool.on('error', () => undefined);
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
  await store.migrate();
  await pool.query(`CREATE TABLE "${schema}".orders (id int PRIMARY KEY, note text NOT NULL)`);
  const sqlOf = async (text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as Record<string, unknown>[];
  // the driver adapter's `schema` puts Prisma's own statements in the test's schema
  const prisma = (await loadClient('postgresql'))(new PrismaPg({ connectionString: services.postgresUrl, max: 4 }, { schema }));
  return {
    database: 'postgres',
    dialect: 'postgres',
    prisma,
    orders: `"${schema}".orders`,
    store,
    controls: postgresTestControls(sqlOf, schema),
    sql: sqlOf,
    async cleanup() {
      await prisma.$disconnect();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

async function mariadbBackend(): Promise<PrismaBackend> {
  const fresh = await freshMysqlDatabase('prisma');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  await fresh.sql('CREATE TABLE orders (id INT PRIMARY KEY, note TEXT NOT NULL)');
  const url = new URL(fresh.url);
  const prisma = (await loadClient('mysql'))(
    new PrismaMariaDb({ host: url.hostname, port: Number(url.port), user: decodeURIComponent(url.username), database: fresh.name, connectionLimit: 4 }),
  );
  return {
    database: 'mariadb',
    dialect: 'mysql',
    prisma,
    orders: 'orders',
    store,
    controls: mysqlTestControls(fresh.sql),
    sql: fresh.sql,
    async cleanup() {
      await prisma.$disconnect();
      await fresh.cleanup();
    },
  };
}

async function sqliteBackend(): Promise<PrismaBackend> {
  const file = freshSqliteFile('prisma');
  const store = new SqliteOutboxStore(file.database());
  await store.migrate();
  const plain = file.database();
  await plain.write(() => plain.run('CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT NOT NULL)'));
  // Prisma opens its own connection to the file; `timeout` is better-sqlite3's busy wait for the relay's writes
  const prisma = (await loadClient('sqlite'))(new PrismaBetterSqlite3({ url: `file:${file.path}`, timeout: 5000 }));
  return {
    database: 'sqlite',
    dialect: 'sqlite',
    prisma,
    orders: 'orders',
    store,
    controls: sqliteTestControls(plain),
    sql: (text, params = []) => plain.read(() => plain.all(text, params)),
    async cleanup() {
      await prisma.$disconnect();
      await file.cleanup();
    },
  };
}

export const prismaBackends: Readonly<Record<'postgres' | 'mariadb' | 'sqlite', () => Promise<PrismaBackend>>> = {
  postgres: postgresBackend,
  mariadb: mariadbBackend,
  sqlite: sqliteBackend,
};

/** The Prisma transaction client behind each context the rig made, for nesting. */
const clientOf = new WeakMap<OrmTransactionContext, ShopTransaction>();

function contextOf(tx: ShopTransaction): OrmTransactionContext {
  const context: OrmTransactionContext = {
    tx: fromPrisma(tx),
    async insertOrder(id) {
      await tx.order.create({ data: { id, note: `order ${id}` } });
    },
  };
  clientOf.set(context, tx);
  return context;
}

/**
 * The handles a user might pass by mistake: the root clients are refused by `fromPrisma` itself (and do not
 * compile), the kept transaction clients by the scope Prisma keeps of its running transactions.
 */
async function mistakesOf(prisma: ShopClient) {
  const extended = prisma.$extends({ name: 'audit' });
  const committed = await prisma.$transaction(async (tx) => tx);
  const rolledBack = await prisma
    .$transaction(async (tx) => {
      throw Object.assign(new Error('roll back'), { tx });
    })
    .catch((error: { tx: ShopTransaction }) => error.tx);
  const nested = await prisma.$transaction((tx) => tx.$transaction(async (inner) => inner));
  return [
    { name: 'the root PrismaClient', handle: () => fromPrisma(prisma as never) },
    { name: 'the root client of $extends', handle: () => fromPrisma(extended as never) },
    { name: 'a tx kept after its transaction committed', handle: () => fromPrisma(committed) },
    { name: 'a tx kept after its transaction rolled back', handle: () => fromPrisma(rolledBack) },
    { name: 'the tx of a nested transaction kept after it ended', handle: () => fromPrisma(nested) },
  ];
}

export function prismaHarness(database: keyof typeof prismaBackends): AdapterHarness {
  return {
    orm: 'Prisma 7 (driver adapter)',
    database,
    async setup(): Promise<AdapterRig> {
      const backend = await prismaBackends[database]();
      const { prisma } = backend;
      const transaction = <T>(work: (context: OrmTransactionContext) => Promise<T>): Promise<T> => prisma.$transaction((tx) => work(contextOf(tx)));
      const placeholder = backend.dialect === 'postgres' ? '$1' : '?';
      return {
        store: backend.store,
        controls: backend.controls,
        transaction,
        async nested(outer, inner) {
          const tx = clientOf.get(outer);
          if (tx === undefined) throw new Error('nested() was given a context of another transaction');
          return tx.$transaction((innerTx) => inner(contextOf(innerTx)));
        },
        mistakes: () => mistakesOf(prisma),
        runThroughOutbox: (outboxTransaction, work) => outboxTransaction(() => transaction(work)),
        orderExists: async (id) => (await backend.sql(`SELECT id FROM ${backend.orders} WHERE id = ${placeholder}`, [id])).length === 1,
        cleanup: () => backend.cleanup(),
      };
    },
  };
}
