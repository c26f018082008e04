import { CompiledQuery, Kysely, MysqlDialect, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import { createPool } from 'mysql2';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { fromKysely } from '../../src/adapters/kysely/index.js';
import type { InboxEntryRef } from '../../src/core/ports/inbox-store.js';
import { MysqlInboxStore } from '../../src/stores/mysql/inbox/mysql-inbox-store.js';
import { PostgresInboxStore } from '../../src/stores/postgres/inbox/postgres-inbox-store.js';
import { SqliteInboxStore } from '../../src/stores/sqlite/inbox/sqlite-inbox-store.js';
import type { OrmTransactionsOptions, PortClaimingInboxStore } from '../../src/consumer/with-orm-transactions.js';
import { defineTransaction, type OutboxTransaction, type SqlDialect, type SqlRows, type TransactionStatus } from '../../src/core/ports/outbox-transaction.js';
import { mysqlExecutor } from '../../src/stores/mysql/database.js';
import { quoteMysql } from '../../src/stores/mysql/table-names.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { SQLITE_NOW_MS } from '../../src/stores/sqlite/migrations.js';
import type { InboxSqlDialect } from '../conformance/inbox-conformance.js';
import { freshMysqlDatabase } from './mysql-database.js';
import { services, uniqueName } from './services.js';
import { freshSqliteFile } from './sqlite-file.js';

/** The consumer's own tables as Kysely sees them. */
export interface Shop {
  payments: { message_id: string; amount: number };
}

/**
 * One database with a migrated inbox, a `payments` table for the handlers' business rows, Kysely over it as an
 * application configures it, and hand-made transactions of the port over its raw driver (as an adapter would make).
 */
export interface Rig {
  readonly dialect: SqlDialect;
  /** The inbox store itself (its own pool or connection). */
  readonly store: PortClaimingInboxStore;
  storeWith(options: { schema?: string; database?: string; table?: string }): PortClaimingInboxStore;
  readonly db: Kysely<Shop>;
  readonly schema: string;
  readonly sqlDialect: Omit<InboxSqlDialect<unknown>, 'write'>;
  /** Plain SQL outside any transaction, on a connection of its own, in the dialect's placeholders. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  /** A hand-made handle (no status: the store must prove it) on connections in autocommit. */
  autocommitHandle(): OutboxTransaction;
  /** Runs `work` with a hand-made handle (no status) inside a driver transaction on one connection: committed when it resolves. */
  inDriverTransaction(work: (tx: OutboxTransaction) => Promise<unknown>): Promise<unknown>;
  cleanup(): Promise<void>;
}

export const handmade = (
  dialect: SqlDialect,
  query: (sql: string, params: readonly unknown[]) => Promise<SqlRows>,
  status?: () => TransactionStatus | undefined,
) => defineTransaction({ dialect, source: 'a hand-made handle', fix: 'Run it inside BEGIN ... COMMIT.', query, ...(status === undefined ? {} : { status }) });

const pgRows = (result: pg.QueryResult) => ({ rows: result.rows as Record<string, unknown>[], affectedRows: result.rowCount ?? 0 });

async function postgresRig(): Promise<Rig> {
  const schema = uniqueName('inorm');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 6 });
  pool.on('error', () => undefined);
  const storeWith = (options: { schema?: string; table?: string }) => new PostgresInboxStore(fromPgPool(pool), { schema, ...options });
  const store = storeWith({});
  await store.migrate();
  await pool.query(`CREATE TABLE "${schema}".payments (message_id uuid PRIMARY KEY, amount int NOT NULL)`);
  const kyselyPool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  kyselyPool.on('error', () => undefined);
  const db = new Kysely<Shop>({ dialect: new PostgresDialect({ pool: kyselyPool }) }).withSchema(schema);
  return {
    dialect: 'postgres',
    store,
    storeWith,
    db,
    schema,
    sqlDialect: {
      table: (name) => `"${schema}"."${name}"`,
      param: (n) => `$${n}`,
      uuidType: 'uuid',
      count: 'count(*)::int',
      hoursAgo: (h) => `now() - interval '${h} hours'`,
      namespaceOption: 'schema',
    },
    sql: async (text, params = []) => (await pool.query(text, params)).rows as Record<string, unknown>[],
    autocommitHandle: () => handmade('postgres', async (text, params) => pgRows(await pool.query(text, [...params]))),
    async inDriverTransaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(handmade('postgres', async (text, params) => pgRows(await client.query(text, [...params]))));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    async cleanup() {
      await db.destroy();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

async function mariadbRig(): Promise<Rig> {
  const fresh = await freshMysqlDatabase('inorm');
  const storeWith = (options: { database?: string; table?: string }) => new MysqlInboxStore(fresh.database, { database: fresh.name, ...options });
  const store = storeWith({});
  await store.migrate();
  await fresh.sql('CREATE TABLE payments (message_id CHAR(36) PRIMARY KEY, amount INT NOT NULL)');
  // plain reads with mysql2's defaults, so counts read as numbers
  const plain = mysql.createPool({ uri: fresh.url, connectionLimit: 2 });
  const onPool = mysqlExecutor(fresh.pool);
  const db = new Kysely<Shop>({ dialect: new MysqlDialect({ pool: createPool({ uri: fresh.url, connectionLimit: 4 }) }) });
  return {
    dialect: 'mysql',
    store,
    storeWith,
    db,
    schema: fresh.name,
    sqlDialect: {
      table: (name) => `${quoteMysql(fresh.name)}.${quoteMysql(name)}`,
      param: () => '?',
      uuidType: 'CHAR(36)',
      count: 'count(*)',
      hoursAgo: (h) => `TIMESTAMPADD(HOUR, -${h}, UTC_TIMESTAMP(6))`,
      namespaceOption: 'database',
    },
    sql: async (text, params) => (await plain.query(text, params))[0] as Record<string, unknown>[],
    autocommitHandle: () => handmade('mysql', (text, params) => onPool.query(text, params)),
    async inDriverTransaction(work) {
      const connection = await fresh.pool.getConnection();
      const executor = mysqlExecutor(connection);
      try {
        await connection.beginTransaction();
        const result = await work(handmade('mysql', (text, params) => executor.query(text, params)));
        await connection.commit();
        return result;
      } catch (error) {
        await connection.rollback();
        throw error;
      } finally {
        connection.release();
      }
    },
    async cleanup() {
      await db.destroy();
      await plain.end();
      await fresh.cleanup();
    },
  };
}

async function sqliteRig(): Promise<Rig> {
  const file = freshSqliteFile('inorm');
  const database = file.database();
  const storeWith = (options: { table?: string }) => new SqliteInboxStore(database, options);
  const store = storeWith({});
  await store.migrate();
  const plain = file.connect();
  plain.exec('CREATE TABLE payments (message_id TEXT PRIMARY KEY, amount INTEGER NOT NULL)');
  const run =
    (connection: ReturnType<typeof file.connect>) =>
    async (text: string, params: readonly unknown[]): Promise<SqlRows> => {
      const statement = connection.prepare(text);
      if (statement.reader) return { rows: statement.all(...params) as Record<string, unknown>[], affectedRows: 0 };
      return { rows: [], affectedRows: statement.run(...params).changes };
    };
  const connectWaiting = () => {
    const connection = file.connect();
    // the application's connections wait for other writers as better-sqlite3 does by default
    connection.pragma('busy_timeout = 5000');
    return connection;
  };
  const autocommit = connectWaiting();
  const driver = connectWaiting();
  // one transaction at a time on the driver's connection, as an ORM over one connection runs them
  let turn: Promise<unknown> = Promise.resolve();
  const db = new Kysely<Shop>({ dialect: new SqliteDialect({ database: connectWaiting() }) });
  return {
    dialect: 'sqlite',
    store,
    storeWith,
    db,
    schema: 'main',
    sqlDialect: {
      table: (name) => `"${name}"`,
      param: () => '?',
      uuidType: 'TEXT',
      count: 'count(*)',
      hoursAgo: (h) => `(${SQLITE_NOW_MS} - ${h * 3_600_000})`,
      namespaceOption: null,
    },
    sql: (text, params = []) => run(plain)(text, params).then((result) => result.rows),
    autocommitHandle: () => handmade('sqlite', run(autocommit)),
    inDriverTransaction(work) {
      const transaction = turn.then(async () => {
        driver.exec('BEGIN IMMEDIATE');
        try {
          const result = await work(handmade('sqlite', run(driver)));
          driver.exec('COMMIT');
          return result;
        } catch (error) {
          if (driver.inTransaction) driver.exec('ROLLBACK');
          throw error;
        }
      });
      turn = transaction.catch(() => undefined);
      return transaction;
    },
    async cleanup() {
      await db.destroy();
      await file.cleanup();
    },
  };
}

export const rigs: readonly { readonly name: string; readonly open: () => Promise<Rig> }[] = [
  { name: 'PostgreSQL', open: postgresRig },
  { name: 'MariaDB', open: mariadbRig },
  { name: 'SQLite', open: sqliteRig },
];

/** An ORM as the inbox sees it: its transaction, its adapter, and a handler's business write through its `tx`. */
export interface OrmUnderTest<OrmTx> {
  readonly name: string;
  options(rig: Rig): OrmTransactionsOptions<OrmTx>;
  pay(rig: Rig, tx: OrmTx, messageId: string, amount: number): Promise<void>;
  /** A read through the ORM's transaction: it sees that transaction's own uncommitted rows. */
  read(tx: OrmTx, sql: string, params: unknown[]): Promise<readonly Record<string, unknown>[]>;
}

export const kysely: OrmUnderTest<Transaction<Shop>> = {
  name: 'Kysely',
  options: (rig) => ({ transaction: (work) => rig.db.transaction().execute(work), adapt: fromKysely }),
  async pay(_rig, trx, messageId, amount) {
    await trx.insertInto('payments').values({ message_id: messageId, amount }).execute();
  },
  read: async (trx, sql, params) => (await trx.executeQuery(CompiledQuery.raw(sql, params))).rows as Record<string, unknown>[],
};

/** The plumbing without an ORM: a driver transaction handed to the handler as a hand-made handle of the port. */
export const handmadeOrm: OrmUnderTest<OutboxTransaction> = {
  name: 'a hand-made handle',
  options: (rig) => ({ transaction: (work) => rig.inDriverTransaction(work), adapt: (tx) => tx }),
  async pay(rig, tx, messageId, amount) {
    const p = rig.sqlDialect.param;
    await tx.query(`INSERT INTO ${rig.sqlDialect.table('payments')} (message_id, amount) VALUES (${p(1)}, ${p(2)})`, [messageId, amount]);
  },
  read: async (tx, sql, params) => (await tx.query(sql, params)).rows,
};

export function entryRef(id: string, consumer = 'billing'): InboxEntryRef {
  return { consumer, id, type: 'invoice.paid', topic: 'invoices', key: 'invoice-7' };
}
