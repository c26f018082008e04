import { CompiledQuery, Kysely, MysqlDialect, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import { createPool } from 'mysql2';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromKysely } from '../../src/adapters/kysely/index.js';
import { Inbox } from '../../src/consumer/inbox.js';
import type { InboxEntryRef } from '../../src/consumer/inbox-store.js';
import { MessageRegistry, type MessageHandler } from '../../src/consumer/message-registry.js';
import { MysqlInboxStore } from '../../src/consumer/mysql/mysql-inbox-store.js';
import { PostgresInboxStore } from '../../src/consumer/postgres/inbox-postgres-store.js';
import { SqliteInboxStore } from '../../src/consumer/sqlite/sqlite-inbox-store.js';
import { withOrmTransactions, type OrmTransactionsOptions, type PortClaimingInboxStore } from '../../src/consumer/with-orm-transactions.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { defineTransaction, type OutboxTransaction, type SqlDialect, type SqlRows, type TransactionStatus } from '../../src/core/ports/outbox-transaction.js';
import { mysqlExecutor } from '../../src/stores/mysql/database.js';
import { quoteMysql } from '../../src/stores/mysql/table-names.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { SQLITE_NOW_MS } from '../../src/stores/sqlite/migrations.js';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase, type FreshDatabase } from '../support/fresh-services.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeInboxConformance, message, type InboxSqlDialect } from '../conformance/inbox-conformance.js';

/** The consumer's own tables as Kysely sees them. */
interface Shop {
  payments: { message_id: string; amount: number };
}

/**
 * One database with a migrated inbox, a `payments` table for the handlers' business rows, Kysely over it as an
 * application configures it, and hand-made transactions of the port over its raw driver (as an adapter would make).
 */
interface Rig {
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

const handmade = (dialect: SqlDialect, query: (sql: string, params: readonly unknown[]) => Promise<SqlRows>, status?: () => TransactionStatus | undefined) =>
  defineTransaction({ dialect, source: 'a hand-made handle', fix: 'Run it inside BEGIN ... COMMIT.', query, ...(status === undefined ? {} : { status }) });

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
    sqlDialect: { table: (name) => `"${schema}"."${name}"`, param: (n) => `$${n}`, uuidType: 'uuid', count: 'count(*)::int', hoursAgo: (h) => `now() - interval '${h} hours'`, namespaceOption: 'schema' },
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
  const run = (connection: ReturnType<typeof file.connect>) => async (text: string, params: readonly unknown[]): Promise<SqlRows> => {
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
    sqlDialect: { table: (name) => `"${name}"`, param: () => '?', uuidType: 'TEXT', count: 'count(*)', hoursAgo: (h) => `(${SQLITE_NOW_MS} - ${h * 3_600_000})`, namespaceOption: null },
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

const rigs: readonly { readonly name: string; readonly open: () => Promise<Rig> }[] = [
  { name: 'PostgreSQL', open: postgresRig },
  { name: 'MariaDB', open: mariadbRig },
  { name: 'SQLite', open: sqliteRig },
];

/** An ORM as the inbox sees it: its transaction, its adapter, and a handler's business write through its `tx`. */
interface OrmUnderTest<OrmTx> {
  readonly name: string;
  options(rig: Rig): OrmTransactionsOptions<OrmTx>;
  pay(rig: Rig, tx: OrmTx, messageId: string, amount: number): Promise<void>;
  /** A read through the ORM's transaction: it sees that transaction's own uncommitted rows. */
  read(tx: OrmTx, sql: string, params: unknown[]): Promise<readonly Record<string, unknown>[]>;
}

const kysely: OrmUnderTest<Transaction<Shop>> = {
  name: 'Kysely',
  options: (rig) => ({ transaction: (work) => rig.db.transaction().execute(work), adapt: fromKysely }),
  async pay(_rig, trx, messageId, amount) {
    await trx.insertInto('payments').values({ message_id: messageId, amount }).execute();
  },
  read: async (trx, sql, params) => (await trx.executeQuery(CompiledQuery.raw(sql, params))).rows as Record<string, unknown>[],
};

/** The plumbing without an ORM: a driver transaction handed to the handler as a hand-made handle of the port. */
const handmadeOrm: OrmUnderTest<OutboxTransaction> = {
  name: 'a hand-made handle',
  options: (rig) => ({ transaction: (work) => rig.inDriverTransaction(work), adapt: (tx) => tx }),
  async pay(rig, tx, messageId, amount) {
    const p = rig.sqlDialect.param;
    await tx.query(`INSERT INTO ${rig.sqlDialect.table('payments')} (message_id, amount) VALUES (${p(1)}, ${p(2)})`, [messageId, amount]);
  },
  read: async (tx, sql, params) => (await tx.query(sql, params)).rows,
};

function entryRef(id: string, consumer = 'billing'): InboxEntryRef {
  return { consumer, id, type: 'invoice.paid', topic: 'invoices', key: 'invoice-7' };
}

function describeOrmHandlers<OrmTx>(rigName: string, open: () => Promise<Rig>, orm: OrmUnderTest<OrmTx>): void {
  describe(`inbox handlers writing through ${orm.name} on ${rigName}`, () => {
    let rig: Rig | undefined;
    afterEach(async () => {
      await rig?.cleanup();
      rig = undefined;
    });

    async function setup() {
      rig = await open();
      const r = rig;
      const { table, param: p } = r.sqlDialect;
      const entrySql = `SELECT state, attempts, last_error FROM ${table('outbox_inbox')} WHERE consumer = ${p(1)} AND message_id = ${p(2)}`;
      const entry = async (id: string) => (await r.sql(entrySql, ['billing', id]))[0];
      const payments = async (id: string) => (await r.sql(`SELECT amount FROM ${table('payments')} WHERE message_id = ${p(1)}`, [id])).map((row) => Number(row.amount));
      const inbox = (options: { registry?: MessageRegistry<OrmTx> } = {}) =>
        new Inbox(withOrmTransactions<OrmTx>(r.store, orm.options(r)), { consumer: 'billing', retry: { baseDelayMs: 10, maxDelayMs: 20, jitter: 0 }, ...options });
      return { r, entrySql, entry, payments, inbox };
    }

    it("commits the handler's business row with the inbox entry, in the handler's own transaction", async () => {
      const { r, entrySql, entry, payments, inbox } = await setup();
      const during: unknown[] = [];
      const registry = new MessageRegistry<OrmTx>().register('invoice.paid', z.object({ amount: z.number() }), async (m, tx) => {
        await orm.pay(r, tx, m.id, m.payload.amount);
        // the ORM's transaction sees the entry claimed; outside it, neither the entry nor the payment exists yet
        during.push({ inside: await orm.read(tx, entrySql, ['billing', m.id]), outside: { entry: await entry(m.id), payments: await payments(m.id) } });
      });
      const m = message({ type: 'invoice.paid', topic: 'invoices', payload: { amount: 1250 } });
      expect(await inbox({ registry }).handle(m)).toEqual({ status: 'processed', attempts: 1 });
      expect(during).toEqual([{ inside: [{ state: 'processed', attempts: 1, last_error: null }], outside: { entry: undefined, payments: [] } }]);
      expect(await payments(m.id)).toEqual([1250]);
      expect(await entry(m.id)).toEqual({ state: 'processed', attempts: 1, last_error: null });
      if (r.dialect === 'postgres') {
        // xmin: the transaction that wrote each row; one value means one commit
        const writers = await r.sql(
          `SELECT (SELECT xmin::text FROM "${r.schema}".payments WHERE message_id = $1) AS payment, (SELECT xmin::text FROM "${r.schema}".outbox_inbox WHERE message_id = $1) AS entry`,
          [m.id],
        );
        expect(writers[0]?.payment).toBe(writers[0]?.entry);
      }
    });

    it('rolls back the business row and the claim of a throwing handler, counts the attempt, and commits the retry', async () => {
      const { r, entry, payments, inbox } = await setup();
      const m = message({ type: 'invoice.paid', topic: 'invoices' });
      const declined: MessageHandler<OrmTx> = async (msg, tx) => {
        await orm.pay(r, tx, msg.id, 1);
        throw new Error('card declined');
      };
      expect(await inbox().handle(m, declined)).toMatchObject({ status: 'retry', attempts: 1, error: 'Error: card declined' });
      expect(await payments(m.id)).toEqual([]);
      expect(await entry(m.id)).toEqual({ state: 'failed', attempts: 1, last_error: 'Error: card declined' });
      expect(await inbox().handle(m, async (msg, tx) => orm.pay(r, tx, msg.id, 2))).toEqual({ status: 'processed', attempts: 2 });
      expect(await payments(m.id)).toEqual([2]);
      expect(await entry(m.id)).toMatchObject({ state: 'processed', attempts: 2 });
    });

    it('runs nothing for a copy already processed, delivered again or at once', async () => {
      const { r, payments, inbox } = await setup();
      let runs = 0;
      const pay: MessageHandler<OrmTx> = async (msg, tx) => {
        runs++;
        await orm.pay(r, tx, msg.id, 5);
      };
      const m = message({ type: 'invoice.paid', topic: 'invoices' });
      expect(await inbox().handle(m, pay)).toEqual({ status: 'processed', attempts: 1 });
      expect(await inbox().handle({ ...m, deliveryCount: 2 }, pay)).toEqual({ status: 'duplicate', state: 'processed' });
      expect(runs).toBe(1);
      const copies = message({ type: 'invoice.paid', topic: 'invoices' });
      const consumer = inbox();
      const outcomes = await Promise.all(Array.from({ length: 4 }, () => consumer.handle(copies, pay)));
      expect(outcomes.map((o) => o.status).sort()).toEqual(['duplicate', 'duplicate', 'duplicate', 'processed']);
      expect(runs).toBe(2);
      expect([await payments(m.id), await payments(copies.id)]).toEqual([[5], [5]]);
    });
  });
}

for (const { name, open } of rigs) {
  describeOrmHandlers(name, open, kysely);
  describeOrmHandlers(name, open, handmadeOrm);
}

describe.each(rigs)('the claim through a hand-made handle of the port on $name', ({ open }) => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.cleanup();
    rig = undefined;
  });

  it('is refused in the database, with nothing written, and the handler does not run', async () => {
    rig = await open();
    const r = rig;
    const { table, param: p } = r.sqlDialect;
    const m = message({ type: 'invoice.paid', topic: 'invoices' });
    const stored = async () => r.sql(`SELECT state, attempts FROM ${table('outbox_inbox')} WHERE message_id = ${p(1)}`, [m.id]);
    await expect(r.store.claim(r.autocommitHandle(), entryRef(m.id))).rejects.toMatchObject({
      code: 'OUTBOXER_NOT_IN_TRANSACTION',
      message: expect.stringMatching(new RegExp(`^inbox billing: the claim of message ${m.id} was refused, so nothing was claimed and no handler ran\\. .*withOrmTransactions.* The store said: .*a hand-made handle outside any transaction`)),
    });
    expect(await stored()).toEqual([]);

    // an ORM "transaction" that is not one: the attempt is counted outside it, the handler never ran
    let runs = 0;
    const notATransaction = withOrmTransactions<OutboxTransaction>(r.store, { transaction: (work) => work(r.autocommitHandle()), adapt: (tx) => tx });
    const outcome = await new Inbox(notATransaction, { consumer: 'billing' }).handle(m, async () => {
      runs++;
    });
    expect(outcome).toMatchObject({ status: 'retry', attempts: 1, error: expect.stringMatching(/^OUTBOXER_NOT_IN_TRANSACTION: inbox billing: /) });
    expect(runs).toBe(0);
    expect(await stored()).toEqual([{ state: 'failed', attempts: 1 }]);
  });

  it('is refused without a statement for a handle that says its transaction ended or failed, or that is on another database', async () => {
    rig = await open();
    const statements: string[] = [];
    const counted = (dialect: SqlDialect, status: () => TransactionStatus | undefined) =>
      handmade(dialect, async (sql) => {
        statements.push(sql);
        return { rows: [], affectedRows: 0 };
      }, status);
    const entry = entryRef(message().id);
    await expect(rig.store.claim(counted(rig.dialect, () => 'closed'), entry)).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringContaining('not inside an open transaction') });
    await expect(rig.store.claim(counted(rig.dialect, () => 'failed'), entry)).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringContaining('waits for its ROLLBACK') });
    const other: SqlDialect = rig.dialect === 'sqlite' ? 'postgres' : 'sqlite';
    const wrong = rig.store.claim(counted(other, () => 'open'), entry);
    await expect(wrong).rejects.toBeInstanceOf(ConfigurationError);
    await expect(wrong).rejects.toMatchObject({ code: 'OUTBOXER_WRONG_DIALECT', message: expect.stringMatching(/^inbox billing: the claim of message/) });
    expect(statements).toEqual([]);
  });

  it("takes a handle its driver vouches for (the stores' own raw-driver handles) without a probe", async () => {
    rig = await open();
    const r = rig;
    const m = message({ type: 'invoice.paid', topic: 'invoices' });
    const statements: string[] = [];
    const vouched = (tx: OutboxTransaction) =>
      handmade(r.dialect, (sql, params) => {
        statements.push(sql.trimStart().split(/\s/)[0] ?? '');
        return tx.query(sql, params);
      }, () => 'open');
    await r.inDriverTransaction((tx) => r.store.claim(vouched(tx), entryRef(m.id)));
    expect(await r.sql(`SELECT state, attempts FROM ${r.sqlDialect.table('outbox_inbox')} WHERE message_id = ${r.sqlDialect.param(1)}`, [m.id])).toEqual([{ state: 'processed', attempts: 1 }]);
    // the claim's own statements only: no set_config probe, @@in_transaction read or BEGIN
    const expected: Record<SqlDialect, string[]> = { postgres: ['INSERT'], mysql: ['INSERT', 'SELECT', 'UPDATE'], sqlite: ['INSERT', 'SELECT', 'UPDATE'] };
    expect(statements).toEqual(expected[r.dialect]);
  });
});

describe('withOrmTransactions options', () => {
  // never connected: everything here is refused before a statement
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
  afterAll(() => pool.end());
  const store = new PostgresInboxStore(fromPgPool(pool));
  const adapt = (tx: OutboxTransaction) => tx;
  const transaction = (work: (tx: OutboxTransaction) => Promise<unknown>) => work(handmade('postgres', async () => ({ rows: [], affectedRows: 0 })));

  it('refuses what is not a function, an unknown option, and a store that is not an inbox store', () => {
    const refused = (run: () => unknown, option: string | undefined, words: RegExp) => {
      let caught: unknown;
      try {
        run();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigurationError);
      expect(caught).toMatchObject({ code: 'OUTBOXER_INVALID_OPTION', message: expect.stringMatching(words), options: option === undefined ? [] : [option] });
    };
    refused(() => withOrmTransactions<OutboxTransaction>(store, { transaction: 'db.transaction' as never, adapt }), 'transaction', /option transaction: must be a function .* got string/);
    refused(() => withOrmTransactions(store, { transaction } as never), 'adapt', /option adapt: must be the ORM's adapter .* got undefined/);
    refused(() => withOrmTransactions(store, { transaction, adapt, retries: 3 } as never), 'retries', /option retries: not an option \(known: transaction, adapt\)/);
    refused(() => withOrmTransactions(store, null as never), undefined, /options must be \{ transaction, adapt \}, got null/);
    refused(() => withOrmTransactions({ claim: () => undefined } as never, { transaction, adapt }), undefined, /must be an inbox store .* has no recordFailure, purgeProcessed/);
  });

  it('refuses an adapter that returns a raw driver handle, and an ORM transaction that never ran the work', async () => {
    let rawQueries = 0;
    const raw = { query: async () => ((rawQueries += 1), { rows: [], rowCount: 0 }) };
    const wrapped = withOrmTransactions<typeof raw>(store, { transaction: (work) => work(raw), adapt: (tx) => tx as never });
    await expect(wrapped.claim(raw, entryRef(message().id))).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringMatching(/^withOrmTransactions: option adapt returned an object \(Object\), not a transaction of the port/) });
    expect(rawQueries).toBe(0);
    const idle = withOrmTransactions<OutboxTransaction>(store, { transaction: async () => undefined, adapt });
    await expect(idle.transaction(async () => 'never')).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_OPTION', message: expect.stringContaining('resolved before the work it was given had run') });
  });

  it("needs the ORM's transaction type: inferred from the adapter it would be the adapter's view, not the ORM's", () => {
    const db = new Kysely<Shop>({ dialect: new PostgresDialect({ pool }) });
    const typed = withOrmTransactions<Transaction<Shop>>(store, { transaction: (work) => db.transaction().execute(work), adapt: fromKysely });
    const untyped = withOrmTransactions(store, {
      transaction: (work) => db.transaction().execute(work),
      // @ts-expect-error OrmTx is not inferred from the adapter: give it, withOrmTransactions<Transaction<DB>>(...)
      adapt: fromKysely,
    });
    expect([typeof typed.claim, typeof untyped.claim]).toEqual(['function', 'function']);
  });
});

/** The whole inbox conformance suite over Kysely's transactions, on each database. */
for (const { name, open } of rigs) {
  describeInboxConformance<Transaction<Shop>>({
    name: `${name} through Kysely transactions (withOrmTransactions)`,
    async setup() {
      const r = await open();
      const options = kysely.options(r);
      return {
        store: withOrmTransactions<Transaction<Shop>>(r.store, options),
        schema: r.schema,
        storeWith: (storeOptions) => withOrmTransactions<Transaction<Shop>>(r.storeWith(storeOptions), options),
        sql: (text, params) => r.sql(text, params),
        dialect: {
          ...r.sqlDialect,
          async write(trx, sql, params) {
            await trx.executeQuery(CompiledQuery.raw(sql, [...params]));
          },
        },
        cleanup: () => r.cleanup(),
      };
    },
  });
}

/** examples/consumer-orm.ts, the snippet of docs/consumer.md, run as a user runs it on a PostgreSQL database of its own. */
describe('the consumer ORM example', () => {
  let database: FreshDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it("applies order.paid once through Kysely's transaction, committed with the inbox entry", async () => {
    database = await freshDatabase();
    const run = await startScript('examples/consumer-orm.ts', [], cliEnv({ DATABASE_URL: database.url })).waitForExit(30_000);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const { id, outcomes } = JSON.parse(run.stdout) as { id: string; outcomes: string[] };
    expect(outcomes).toEqual(['processed', 'duplicate']);
    const invoice = await database.pool.query<{ paid_at: string; xmin: string }>('SELECT paid_at, xmin::text AS xmin FROM invoices WHERE order_id = 42');
    const entry = await database.pool.query<{ consumer: string; state: string; attempts: number; xmin: string }>(
      'SELECT consumer, state, attempts, xmin::text AS xmin FROM outbox_inbox WHERE message_id = $1',
      [id],
    );
    expect(invoice.rows).toEqual([{ paid_at: '2025-01-31T10:00:00Z', xmin: expect.any(String) }]);
    // the invoice's update and the inbox entry: written by one transaction
    expect(entry.rows).toEqual([{ consumer: 'billing', state: 'processed', attempts: 1, xmin: invoice.rows[0]?.xmin }]);
  });
});
