import { randomUUID } from 'node:crypto';
import { EntitySchema, MikroORM, TransactionPropagation, type EntityManager, type Options } from '@mikro-orm/core';
import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { MariaDbKnexDialect, MySqlDriver } from '@mikro-orm/mysql';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { afterEach, describe, expect, it } from 'vitest';
import { fromMikroOrm } from '../../src/adapters/mikro-orm/index.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction, TransactionStatus } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import type { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { services } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import type { AdapterDatabase, AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { expectNothingCommittedAlone, expectVouchedOnlyWhereOpen, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { mysqlTestControls } from './mysql-test-controls.js';
import { postgresTestControls } from './postgres-test-controls.js';
import { sqliteTestControls } from './sqlite-test-controls.js';

interface Order {
  id: number;
  note: string;
}

/** The business row, mapped without decorators. */
const Order = new EntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  properties: { id: { type: 'integer', primary: true, autoincrement: false }, note: { type: 'string' } },
});

const ordersDdl = (table: string) => `CREATE TABLE ${table} (id INTEGER PRIMARY KEY, note TEXT NOT NULL)`;

class Rollback extends Error {}

/** A rollback that hands back the EntityManager of the transaction it ended. */
class RolledBack extends Error {
  constructor(readonly em: EntityManager) {
    super('rolled back on purpose');
  }
}

/** One database under MikroORM beside the outbox store, and plain SQL outside any transaction. */
interface Database<Store extends AdapterRig['store'] = AdapterRig['store']> {
  readonly orm: MikroORM;
  readonly store: Store;
  readonly controls: AdapterRig['controls'];
  /** Plain SQL outside any transaction, in the database's own placeholders. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  /** The `?` or `$1` of the first parameter. */
  readonly placeholder: string;
  /** The business table as plain SQL names it (on PostgreSQL, in the test's schema). */
  readonly orders: string;
  cleanup(): Promise<void>;
}

const ormOptions = { entities: [Order], debug: false, allowGlobalContext: false } satisfies Options;

async function openPostgres(connections = 4): Promise<Database<PostgresOutboxStore> & { readonly schema: string }> {
  const fixture = await createPostgresFixture();
  const sql = async (text: string, params?: unknown[]) => (await fixture.pool.query(text, params)).rows as Record<string, unknown>[];
  const orders = `"${fixture.schema}".orders`;
  await sql(ordersDdl(orders));
  const orm = await MikroORM.init({ ...ormOptions, driver: PostgreSqlDriver, clientUrl: services.postgresUrl, schema: fixture.schema, pool: { min: 0, max: connections } });
  return {
    orm,
    schema: fixture.schema,
    store: fixture.store,
    controls: postgresTestControls(sql, fixture.schema),
    sql,
    placeholder: '$1',
    orders,
    async cleanup() {
      await orm.close(true);
      await fixture.cleanup();
    },
  };
}

async function openMariadb(connections = 4): Promise<Database<MysqlOutboxStore>> {
  const fresh = await freshMysqlDatabase('mko');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  await fresh.sql(ordersDdl('orders'));
  const orm = await MikroORM.init({ ...ormOptions, driver: MySqlDriver, clientUrl: fresh.url, pool: { min: 0, max: connections } });
  return {
    orm,
    store,
    controls: mysqlTestControls(fresh.sql),
    sql: fresh.sql,
    placeholder: '?',
    orders: 'orders',
    async cleanup() {
      await orm.close(true);
      await fresh.cleanup();
    },
  };
}

async function openSqlite(): Promise<Database<SqliteOutboxStore>> {
  const file = freshSqliteFile('mko');
  const store = new SqliteOutboxStore(file.database());
  await store.migrate();
  const plain = file.database();
  plain.handle.exec(ordersDdl('orders'));
  const orm = await MikroORM.init({ ...ormOptions, driver: BetterSqliteDriver, dbName: file.path });
  return {
    orm,
    store,
    controls: sqliteTestControls(plain),
    sql: (text, params = []) => plain.read(() => plain.all(text, params)),
    placeholder: '?',
    orders: 'orders',
    async cleanup() {
      await orm.close(true);
      await file.cleanup();
    },
  };
}

/** The databases MikroORM 6 speaks among outboxer's (it has no PGlite driver). */
type OrmDatabase = Exclude<AdapterDatabase, 'pglite'>;

/** `connections`: the size of MikroORM's pool (on SQLite, Knex's default pool of one connection). */
const OPENERS: Readonly<Record<OrmDatabase, (connections?: number) => Promise<Database>>> = {
  postgres: openPostgres,
  mariadb: openMariadb,
  sqlite: openSqlite,
};
const DATABASES = Object.entries(OPENERS) as [OrmDatabase, (connections?: number) => Promise<Database>][];

/** The rig the shared suite drives: MikroORM's own transactions (`orm.em.transactional`), its entities for the business row. */
function mikroOrmRig(database: Database): AdapterRig {
  const { orm } = database;
  const managers = new WeakMap<OrmTransactionContext, EntityManager>();
  const contextOf = (em: EntityManager): OrmTransactionContext => {
    const context: OrmTransactionContext = {
      tx: fromMikroOrm(em),
      async insertOrder(id) {
        em.create(Order, { id, note: `order ${id}` });
        await em.flush();
      },
    };
    managers.set(context, em);
    return context;
  };
  const managerOf = (context: OrmTransactionContext): EntityManager => {
    const em = managers.get(context);
    if (em === undefined) throw new Error('not a context of this rig');
    return em;
  };
  return {
    store: database.store,
    controls: database.controls,
    transaction: (work) => orm.em.transactional((em) => work(contextOf(em))),
    nested: (outer, inner) => managerOf(outer).transactional((em) => inner(contextOf(em))),
    async mistakes() {
      const forkKeptAfterCommit = await orm.em.transactional(async (em) => em);
      const forkKeptAfterRollback = await orm.em
        .transactional(async (em) => {
          throw new RolledBack(em);
        })
        .catch((error: unknown) => {
          if (error instanceof RolledBack) return error.em;
          throw error;
        });
      const begunAndCommitted = orm.em.fork();
      await begunAndCommitted.begin();
      await begunAndCommitted.commit();
      const adapterKeptAfterCommit = await orm.em.transactional(async (em) => fromMikroOrm(em));
      return [
        { name: 'global-orm.em', handle: () => fromMikroOrm(orm.em) },
        { name: 'fork-outside-any-transaction', handle: () => fromMikroOrm(orm.em.fork()) },
        { name: 'transactional-fork-kept-after-commit', handle: () => fromMikroOrm(forkKeptAfterCommit) },
        { name: 'transactional-fork-kept-after-rollback', handle: () => fromMikroOrm(forkKeptAfterRollback) },
        { name: 'fork-after-begin-and-commit', handle: () => fromMikroOrm(begunAndCommitted) },
        { name: 'adapter-made-inside-used-after-commit', handle: () => adapterKeptAfterCommit },
        // @ts-expect-error the MikroORM instance is not an EntityManager
        { name: 'the-MikroORM-instance', handle: () => fromMikroOrm(orm) },
      ];
    },
    runThroughOutbox: (outboxTransaction, work) => outboxTransaction(() => orm.em.transactional((em) => work(contextOf(em)))),
    async orderExists(id) {
      const rows = await database.sql(`SELECT id FROM ${database.orders} WHERE id = ${database.placeholder}`, [id]);
      return rows.length === 1;
    },
    cleanup: database.cleanup,
  };
}

for (const [database, open] of DATABASES) {
  const harness: AdapterHarness = { orm: 'MikroORM', database, setup: async () => mikroOrmRig(await open()) };
  describeAdapterConformance(harness);
}

/** What the adapter's own status says, asked at once (before the transaction's connection was resolved, it answers with a promise). */
async function statusOf(tx: OutboxTransaction): Promise<TransactionStatus | undefined> {
  return tx.status?.();
}

/** What the driver says inside an open transaction: pg and better-sqlite3 tell, mysql2 cannot (the store asks MariaDB). */
const OPEN_STATUS: Readonly<Record<OrmDatabase, TransactionStatus | undefined>> = { postgres: 'open', mariadb: undefined, sqlite: 'open' };

describe.each(DATABASES)('fromMikroOrm on %s: the port itself', (name, open) => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });
  const setup = async () => (database = await open());

  it("runs statements in the ORM's transaction: seen inside, invisible outside until the commit, gone on rollback", async () => {
    const { orm, sql, placeholder, orders } = await setup();
    const insert = `INSERT INTO ${orders} (id, note) VALUES (${placeholder}, 'plain')`;
    const find = `SELECT id FROM ${orders} WHERE id = ${placeholder}`;
    await orm.em.transactional(async (em) => {
      const tx = fromMikroOrm(em);
      expect(await tx.query(insert, [1])).toEqual({ rows: [], affectedRows: 1 });
      expect(await sql(find, [1])).toEqual([]);
      expect(await statusOf(tx)).toBe(OPEN_STATUS[name]);
    });
    expect(await sql(find, [1])).toHaveLength(1);
    await expect(
      orm.em.transactional(async (em) => {
        await fromMikroOrm(em).query(insert, [2]);
        throw new Rollback('no');
      }),
    ).rejects.toBeInstanceOf(Rollback);
    expect(await sql(find, [2])).toEqual([]);
  });

  it('says closed, and refuses statements, once the transaction it was made in committed; a nested one has its own', async () => {
    const { orm } = await setup();
    const kept = await orm.em.transactional(async (em) => {
      const outer = fromMikroOrm(em);
      const inner = await em.transactional(async (nested) => {
        const tx = fromMikroOrm(nested);
        expect(await statusOf(tx)).toBe(OPEN_STATUS[name]);
        return tx;
      });
      expect(await statusOf(inner)).toBe('closed');
      expect(await statusOf(outer)).toBe(OPEN_STATUS[name]);
      return outer;
    });
    expect(await statusOf(kept)).toBe('closed');
    await expect(kept.query('SELECT 1 AS one', [])).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
  });

  it('refuses orm.em, a fork outside a transaction and a fork after em.commit() at once, naming em.transactional', async () => {
    const { orm } = await setup();
    const begun = orm.em.fork();
    await begun.begin();
    expect(fromMikroOrm(begun).dialect).toBe(name === 'mariadb' ? 'mysql' : name);
    await begun.commit();
    for (const handle of [orm.em, orm.em.fork(), begun]) {
      expect(() => fromMikroOrm(handle)).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringContaining('em.transactional(') }));
    }
    expect(() => fromMikroOrm(orm.em)).toThrow(/global EntityManager \(orm\.em\)/);
  });
});

describe('fromMikroOrm: what each driver binds', () => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });

  it('PostgreSQL: $n placeholders as written (a ? operator untouched), arrays as arrays, bytea, bigint, named statements', async () => {
    database = await openPostgres();
    const ids = [randomUUID(), randomUUID()];
    const row = await database.orm.em.transactional(async (em) => {
      const tx = fromMikroOrm(em);
      const first = await tx.query(
        `SELECT cardinality($1::text[]) AS texts, (SELECT count(*)::int FROM unnest($2::uuid[])) AS uuids, '{"a":1}'::jsonb ? $3 AS has_key,
          length($4::bytea) AS bytes, $5::bigint + 1 AS big, $6::boolean AS yes, $7::text IS NULL AS missing, '?' AS question`,
        [['a', '?', null], ids, 'a', Uint8Array.from([0, 255, 7]), 9007199254740993n, true, null],
      );
      const named = [await tx.query('SELECT $1::int + 1 AS n', [1], { name: 'mko_plus_one' }), await tx.query('SELECT $1::int + 1 AS n', [41], { name: 'mko_plus_one' })];
      return { ...first.rows[0], named: named.map((result) => result.rows[0]?.n) };
    });
    expect(row).toEqual({ texts: 3, uuids: 2, has_key: true, bytes: 3, big: '9007199254740994', yes: true, missing: true, question: '?', named: [2, 42] });
  });

  it('PostgreSQL: says failed once a statement aborted the transaction, so nothing more is written in it', async () => {
    database = await openPostgres();
    const status = await database.orm.em
      .transactional(async (em) => {
        const tx = fromMikroOrm(em);
        // pg rejects at the ErrorResponse; the status ('E') comes with the ReadyForQuery after it
        const client = (await (em.getTransactionContext() as { client: { acquireConnection(): Promise<unknown> } }).client.acquireConnection()) as {
          readonly connection: { once(event: 'readyForQuery', listener: () => void): unknown };
        };
        const statusArrived = new Promise<void>((resolve) => client.connection.once('readyForQuery', resolve));
        await expect(tx.query('SELECT 1 / $1::int AS n', [0])).rejects.toThrow(/division by zero/);
        await statusArrived;
        throw new Rollback(String(await statusOf(tx)));
      })
      .catch((error: unknown) => (error instanceof Rollback ? error.message : Promise.reject(error)));
    expect(status).toBe('failed');
  });

  it('MariaDB: ? placeholders, buffers and Uint8Arrays as bytes, bigint and boolean, rows as plain objects', async () => {
    database = await openMariadb();
    const rows = await database.orm.em.transactional(async (em) => {
      const tx = fromMikroOrm(em);
      return (await tx.query('SELECT ? AS text, HEX(?) AS buffer, HEX(?) AS bytes, ? + 1 AS big, ? AS yes, ? IS NULL AS missing, @@in_transaction AS in_transaction', [
        'a?b',
        Buffer.from([0, 255]),
        Uint8Array.from([1, 2]),
        9007199254740993n,
        true,
        null,
      ])).rows;
    });
    expect(rows).toEqual([{ text: 'a?b', buffer: '00FF', bytes: '0102', big: '9007199254740994', yes: 1, missing: 1, in_transaction: 1 }]);
  });

  it('SQLite: ? placeholders, Uint8Arrays as blobs, bigint, booleans as 0/1 (better-sqlite3 binds no booleans)', async () => {
    database = await openSqlite();
    const rows = await database.orm.em.transactional(async (em) => {
      const tx = fromMikroOrm(em);
      return (await tx.query('SELECT ? AS text, hex(?) AS bytes, ? + 1 AS big, ? AS yes, ? AS no, ? IS NULL AS missing', ['a?b', Uint8Array.from([0, 255]), 41n, true, false, null])).rows;
    });
    expect(rows).toEqual([{ text: 'a?b', bytes: '00FF', big: 42, yes: 1, no: 0, missing: 1 }]);
  });
});

describe('fromMikroOrm: the driver has the last word on the transaction', () => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });

  it.each(DATABASES)(
    '%s: after a raw COMMIT behind MikroORM\'s back, the status no longer says open',
    async (name, open) => {
      database = await open();
      const status = await database.orm.em
        .transactional(async (em) => {
          const tx = fromMikroOrm(em);
          await em.getConnection().execute('COMMIT', [], 'run', em.getTransactionContext());
          const after = await statusOf(tx);
          // MikroORM still thinks it is in the transaction: give its ROLLBACK one to end
          await em.getConnection().execute('BEGIN', [], 'run', em.getTransactionContext());
          throw new Rollback(String(after));
        })
        .catch((error: unknown) => (error instanceof Rollback ? error.message : Promise.reject(error)));
      // mysql2 keeps no transaction state: undefined makes the MariaDB store ask the server (@@in_transaction)
      expect(status).toBe(name === 'mariadb' ? 'undefined' : 'closed');
    },
  );
});

describe('fromMikroOrm on MariaDB: a transaction ended by the server behind MikroORM', () => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });

  it('refuses the enqueue after a DDL statement committed the transaction implicitly (the store asks @@in_transaction), writing nothing', async () => {
    const mariadb = await openMariadb();
    database = mariadb;
    const outbox = new Outbox(mariadb.store);
    await mariadb.orm.em.transactional(async (em) => {
      const tx = fromMikroOrm(em);
      await tx.query('CREATE TABLE invoices (id INTEGER PRIMARY KEY)', []);
      await expect(outbox.enqueue(tx, { topic: 'orders.placed', type: 'order.placed', payload: { id: 1 } })).rejects.toMatchObject({
        code: 'OUTBOXER_NOT_IN_TRANSACTION',
        message: expect.stringContaining('em.transactional('),
      });
    });
    expect(await mariadb.controls.rowCount()).toBe(0);
  });
});

describe('fromMikroOrm on PostgreSQL: MikroORM propagations other than a savepoint', () => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });

  it('REQUIRES_NEW: the message commits with the inner transaction whatever the outer does; NOT_SUPPORTED: its em is refused', async () => {
    const postgres = await openPostgres();
    database = postgres;
    const outbox = new Outbox(postgres.store);
    const attempt = postgres.orm.em.transactional(async (em) => {
      await em.transactional((independent) => outbox.enqueue(fromMikroOrm(independent), { topic: 'audit', type: 'attempted', payload: {} }), {
        propagation: TransactionPropagation.REQUIRES_NEW,
      });
      await em.transactional(async (outside) => {
        expect(() => fromMikroOrm(outside)).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
      }, { propagation: TransactionPropagation.NOT_SUPPORTED });
      await outbox.enqueue(fromMikroOrm(em), { topic: 'orders.placed', type: 'order.placed', payload: {} });
      throw new Rollback('the outer transaction fails');
    });
    await expect(attempt).rejects.toBeInstanceOf(Rollback);
    expect(await postgres.sql(`SELECT topic FROM "${postgres.schema}".outbox`)).toEqual([{ topic: 'audit' }]);
  });
});

describe('fromMikroOrm: a handle kept past its commit', () => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });

  it.each(DATABASES)(
    '%s: cannot reach the connection the next transaction took from the pool (one connection: the same one)',
    async (_name, open) => {
      database = await open(1);
      const { orm, sql, placeholder, orders } = database;
      const kept = await orm.em.transactional(async (em) => fromMikroOrm(em));
      await orm.em.transactional(async (em) => {
        const next = fromMikroOrm(em);
        await next.query(`INSERT INTO ${orders} (id, note) VALUES (${placeholder}, 'next')`, [1]);
        expect(await kept.status?.()).toBe('closed');
        await expect(kept.query(`INSERT INTO ${orders} (id, note) VALUES (${placeholder}, 'kept')`, [2])).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
      });
      expect(await sql(`SELECT id, note FROM ${orders} ORDER BY id`)).toEqual([{ id: 1, note: 'next' }]);
    },
  );
});

describe('fromMikroOrm: what it refuses before any statement', () => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });

  it('is a type error for the MikroORM instance, its Knex, its connection and the bare Knex transaction (orm.em, a fork, has the same type as a transaction fork: refused at run time)', async () => {
    database = await openSqlite();
    const orm = database.orm;
    const attempts = await orm.em.transactional(async (em) => [
      // @ts-expect-error the MikroORM instance is not an EntityManager
      () => fromMikroOrm(orm),
      // @ts-expect-error the Knex transaction MikroORM keeps is not an EntityManager (fromKnex takes that one)
      () => fromMikroOrm(em.getTransactionContext()),
      // @ts-expect-error MikroORM's Connection is not an EntityManager
      () => fromMikroOrm(em.getConnection()),
    ]);
    for (const attempt of attempts) expect(attempt).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
    expect(attempts[0]).toThrow(/given the MikroORM instance/);
  });

  it('refuses a driver it does not speak, naming those it does: sqlite3 (@mikro-orm/sqlite) and the mariadb connector', async () => {
    const file = freshSqliteFile('mko-sqlite3');
    const sqlite3 = await MikroORM.init({ ...ormOptions, driver: BetterSqliteDriver, dbName: file.path, driverOptions: { client: 'sqlite3' } });
    const mariadb = await MikroORM.init({ ...ormOptions, driver: MySqlDriver, clientUrl: services.mysqlUrl, driverOptions: { client: MariaDbKnexDialect }, pool: { min: 0, max: 1 } });
    try {
      const supported = /PostgreSQL \(@mikro-orm\/postgresql\), MariaDB and MySQL \(@mikro-orm\/mysql\) and SQLite \(@mikro-orm\/better-sqlite\)/;
      await sqlite3.em.transactional(async (em) => {
        expect(() => fromMikroOrm(em)).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION', message: expect.stringMatching(supported) }));
        expect(() => fromMikroOrm(em)).toThrow(/runs on the sqlite3 driver/);
      });
      await mariadb.em.transactional(async (em) => {
        expect(() => fromMikroOrm(em)).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION', message: expect.stringMatching(supported) }));
        expect(() => fromMikroOrm(em)).toThrow(/for MariaDB, use @mikro-orm\/mysql/);
      });
    } finally {
      await sqlite3.close(true);
      await mariadb.close(true);
      await file.cleanup();
    }
  });
});

describe.each(DATABASES)('fromMikroOrm on %s: an enqueue not awaited, then the transaction rolls back', (_name, open) => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });
  const floatingRig = async (rollBack: (em: EntityManager) => Promise<void>): Promise<FloatingEnqueueRig> => {
    const { orm, store, controls } = (database = await open());
    return {
      outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
      rowCount: () => controls.rowCount(),
      rollBackAfter: (turns, enqueue) =>
        orm.em
          .transactional(async (em) => {
            enqueue(fromMikroOrm(em));
            await microtaskTurns(turns);
            await rollBack(em);
          })
          .then(
            () => expect.fail('the transaction was to roll back'),
            () => undefined,
          ),
      commit: (work) => orm.em.transactional((em) => work(fromMikroOrm(em))),
    };
  };
  const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
  // MikroORM (and the Knex transaction under it) still count the transaction open: only the driver knows it ended
  const rawRollback = async (em: EntityManager) => {
    await em.getConnection().execute('ROLLBACK', [], 'run', em.getTransactionContext());
    throw new Rollback('and let MikroORM end it too');
  };

  it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {

    await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));

  });


  for (const idempotent of [false, true]) {
    const keyed = idempotent ? ' (with an idempotency key)' : '';
    it(`commits nothing when the callback throws right after it${keyed}`, async () => {
      await expectNothingCommittedAlone(await floatingRig(throwFromCallback), { idempotent });
    });
    it(`commits nothing when a ROLLBACK on the transaction's connection ends the transaction behind MikroORM${keyed}`, async () => {
      await expectNothingCommittedAlone(await floatingRig(rawRollback), { idempotent });
    });
  }
});
