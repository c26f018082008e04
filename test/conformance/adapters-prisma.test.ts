import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fromPrisma, type PrismaTransactionClient } from '../../src/adapters/prisma/index.js';
import { returnsRows } from '../../src/adapters/prisma/returns-rows.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction, SqlDialect } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { ensureTestPrismaClients, prismaClientDirectories, type PrismaProvider } from '../support/prisma/prisma-clients.js';
import type { PrismaClient as PostgresPrismaClient } from '../support/prisma/generated/postgresql/client.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import type { AdapterDatabase, AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { expectNothingCommittedAlone, expectVouchedOnlyWhereOpen, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { mysqlTestControls } from './mysql-test-controls.js';
import { postgresTestControls } from './postgres-test-controls.js';
import { sqliteTestControls } from './sqlite-test-controls.js';

/** The transaction client of the generated `Order (id, note)` schema, as the rigs use it on every provider. */
interface ShopTransaction extends PrismaTransactionClient {
  readonly order: { create(args: { data: { id: number; note: string } }): PromiseLike<unknown> };
  $transaction<R>(work: (tx: ShopTransaction) => Promise<R>): Promise<R>;
}

/** The root client of that schema: a `new PrismaClient({ adapter })` of the provider's generated code. */
interface ShopClient {
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

beforeAll(() => ensureTestPrismaClients(), 180_000);

/** One database with the outbox migrated and an `orders` table, and a Prisma client on it through its driver adapter. */
interface PrismaBackend {
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

const backends: Readonly<Record<'postgres' | 'mariadb' | 'sqlite', () => Promise<PrismaBackend>>> = {
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

function prismaHarness(database: keyof typeof backends): AdapterHarness {
  return {
    orm: 'Prisma 7 (driver adapter)',
    database,
    async setup(): Promise<AdapterRig> {
      const backend = await backends[database]();
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

for (const database of ['postgres', 'mariadb', 'sqlite'] as const) describeAdapterConformance(prismaHarness(database));

describe.each(['postgres', 'mariadb', 'sqlite'] as const)('fromPrisma on %s', (database) => {
  let backend: PrismaBackend | undefined;
  afterEach(async () => {
    await backend?.cleanup();
    backend = undefined;
  });
  const setup = async () => (backend = await backends[database]());

  it('refuses the root client at once, naming the fix', async () => {
    const { prisma } = await setup();
    const attempt = () => fromPrisma(prisma as never);
    expect(attempt).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
    expect(attempt).toThrow(/the root PrismaClient, which runs each statement outside any transaction\. .*prisma\.\$transaction\(async \(tx\) => \{ await outbox\.enqueue\(fromPrisma\(tx\), message\)/);
    expect(() => fromPrisma({} as never)).toThrow(/not a Prisma transaction client/);
  });

  it("tells the database from the driver adapter and runs statements in the transaction, rows keyed by column", async () => {
    const { prisma, dialect, orders } = await setup();
    const p = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');
    const seen = await prisma.$transaction(async (tx) => {
      await tx.order.create({ data: { id: 5, note: 'five' } });
      const outboxTx = fromPrisma(tx);
      expect(outboxTx.dialect).toBe(dialect);
      expect(outboxTx.source).toBe('a Prisma transaction client');
      expect(await outboxTx.query(`UPDATE ${orders} SET note = ${p(1)} WHERE id = ${p(2)}`, ['changed', 5])).toEqual({ rows: [], affectedRows: 1 });
      expect(await outboxTx.query(`INSERT INTO ${orders} (id, note) VALUES (${p(1)}, ${p(2)}), (${p(3)}, ${p(4)})`, [6, 'six', 7, 'seven'])).toEqual({ rows: [], affectedRows: 2 });
      const returned = await outboxTx.query(`/* returning in a comment */ DELETE FROM ${orders} WHERE id = ${p(1)} RETURNING id, 'it''s' AS quoted`, [7]);
      expect(returned).toEqual({ rows: [{ id: 7, quoted: "it's" }], affectedRows: 1 });
      return (await outboxTx.query(`SELECT id, note AS order_note FROM ${orders} WHERE id IN (${p(1)}, ${p(2)}) ORDER BY id`, [5, 6])).rows;
    });
    expect(seen).toEqual([
      { id: 5, order_note: 'changed' },
      { id: 6, order_note: 'six' },
    ]);
  });

  it('binds the scalars the port allows, and on PostgreSQL arrays as arrays', async () => {
    const { prisma, dialect } = await setup();
    const bytes = Uint8Array.from([0, 1, 255]);
    const rows = await prisma.$transaction(async (tx) => {
      const outboxTx = fromPrisma(tx);
      if (dialect === 'postgres') {
        const sql = 'SELECT cardinality($1::text[]) AS n, $2::uuid[] AS ids, $3::int8[] AS delays, $4::bytea AS bytes, $5::bytea AS buffer, $6::boolean AS yes, $7::int8 AS big, $8::text AS absent';
        return (await outboxTx.query(sql, [['a', null, 'c'], ['0190a0d8-0000-7000-8000-000000000000'], [0, 3_600_000], bytes, Buffer.from('hi'), true, 9007199254740993n, null])).rows;
      }
      // hex(): Prisma's SQLite adapter cannot read back a BLOB that has no declared column type
      return (await outboxTx.query('SELECT ? AS yes, ? AS no, HEX(?) AS bytes, HEX(?) AS buffer, ? AS big, ? AS absent, ? AS text', [true, false, bytes, Buffer.from('hi'), 9007199254740993n, null, 'x'])).rows;
    });
    // Prisma decodes raw results itself: 64-bit integers as bigint, bytes as Uint8Array
    if (dialect === 'postgres') {
      expect(rows).toEqual([
        { n: 3, ids: ['0190a0d8-0000-7000-8000-000000000000'], delays: [0n, 3_600_000n], bytes, buffer: new Uint8Array(Buffer.from('hi')), yes: true, big: 9007199254740993n, absent: null },
      ]);
    } else {
      expect(rows).toHaveLength(1);
      expect({ ...rows[0], yes: Number(rows[0]?.yes), no: Number(rows[0]?.no), big: String(rows[0]?.big) }).toEqual({
        yes: 1,
        no: 0,
        bytes: '0001FF',
        buffer: '6869',
        big: '9007199254740993',
        absent: null,
        text: 'x',
      });
    }
  });

  it("says 'closed' for a tx kept after its transaction, and for a nested tx once its savepoint ended, which the store then refuses", async () => {
    const { prisma, store } = await setup();
    // each store takes its own dialect's transactions; the test hands it the adapter's
    const outbox = new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>);
    const inside = await prisma.$transaction(async (tx) => {
      const outboxTx = fromPrisma(tx);
      expect(outboxTx.status?.()).toBeUndefined(); // Prisma never vouches: the store proves it in the database
      const innerTx = await tx.$transaction(async (inner) => {
        expect(fromPrisma(inner).status?.()).toBeUndefined();
        return fromPrisma(inner);
      });
      expect(innerTx.status?.()).toBe('closed');
      await expect(outbox.enqueue(innerTx, { topic: 't', type: 'e', payload: {} })).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
      await expect(innerTx.query('SELECT 1 AS one', [])).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
      expect(outboxTx.status?.()).toBeUndefined();
      return outboxTx;
    });
    expect(inside.status?.()).toBe('closed');
    await expect(inside.query('SELECT 1 AS one', [])).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringMatching(/has ended\. Pass the tx/) });
  });

  it('refuses a tx whose transaction Prisma rolled back on its timeout, and writes nothing', async () => {
    const { prisma, store, controls } = await setup();
    const outbox = new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>);
    const attempt = prisma.$transaction(
      async (tx) => {
        // twice the transaction's timeout: Prisma's own timer, due first, has rolled the transaction back
        await new Promise((resolve) => setTimeout(resolve, 400));
        return outbox.enqueue(fromPrisma(tx), { topic: 't', type: 'e', payload: {} });
      },
      { timeout: 200 },
    );
    await expect(attempt).rejects.toMatchObject({
      code: 'OUTBOXER_NOT_IN_TRANSACTION',
      message: expect.stringMatching(/whose transaction Prisma has ended \(.*expired transaction.*\)\. Pass the tx/),
    });
    expect(await controls.rowCount()).toBe(0);
  });

  it('refuses a dialect that contradicts the driver adapter', async () => {
    const { prisma, dialect } = await setup();
    const other: SqlDialect = dialect === 'sqlite' ? 'postgres' : 'sqlite';
    const attempt = prisma.$transaction(async (tx) => fromPrisma(tx, { dialect: other }));
    await expect(attempt).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_OPTION', message: expect.stringContaining(`told dialect '${other}', but this Prisma client runs on '${dialect}'`) });
  });
});

describe('fromPrisma and the types of the generated client', () => {
  it('does not compile with the root PrismaClient, extended or not; the tx of $transaction and of a nested one do', async () => {
    const { PrismaClient } = (await import(pathToFileURL(join(prismaClientDirectories.test('postgresql'), 'client.ts')).href)) as { PrismaClient: typeof PostgresPrismaClient };
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: services.postgresUrl, max: 1 }) });
    try {
      // @ts-expect-error the root client has $connect and $disconnect, which a transaction client lacks
      expect(() => fromPrisma(prisma)).toThrow(/the root PrismaClient/);
      const extended = prisma.$extends({ name: 'audit' });
      // @ts-expect-error an extended root client too
      expect(() => fromPrisma(extended)).toThrow(/the root PrismaClient/);
      const dialects = await extended.$transaction(async (tx) => [fromPrisma(tx).dialect, await tx.$transaction(async (inner) => fromPrisma(inner).dialect)]);
      expect(dialects).toEqual(['postgres', 'postgres']);
    } finally {
      await prisma.$disconnect();
    }
  });
});

describe('fromPrisma on a client outboxer has no store for, or cannot place', () => {
  const rawApi = { $queryRawUnsafe: async () => [], $executeRawUnsafe: async () => 0 };

  it('names the supported providers', () => {
    const sqlServer = { ...rawApi, _activeProvider: 'sqlserver', _engineConfig: { adapter: { provider: 'sqlserver', adapterName: '@prisma/adapter-mssql' } } };
    expect(() => fromPrisma(sqlServer)).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION' }));
    expect(() => fromPrisma(sqlServer)).toThrow(/PostgreSQL \(provider "postgresql"\), MariaDB\/MySQL \("mysql"\) and SQLite \("sqlite"\); this client's provider is "sqlserver"/);
    const cockroach = { ...rawApi, _activeProvider: 'cockroachdb', _engineConfig: { adapter: { provider: 'postgres', adapterName: '@prisma/adapter-pg' } } };
    expect(() => fromPrisma(cockroach)).toThrow(/this client's provider is "cockroachdb"/);
  });

  it('asks for the dialect when the client does not say, and takes it', () => {
    expect(() => fromPrisma(rawApi)).toThrow(/cannot tell this Prisma client's database: pass it, fromPrisma\(tx, \{ dialect: 'postgres' \}\)/);
    expect(fromPrisma(rawApi, { dialect: 'mysql' }).dialect).toBe('mysql');
  });
});

describe('which statements answer with rows ($queryRawUnsafe) and which with a count ($executeRawUnsafe)', () => {
  it.each([
    ['SELECT 1', 'postgres', true],
    ['  select set_config($1, $2, true)', 'postgres', true],
    ['VALUES (1)', 'sqlite', true],
    ['PRAGMA table_info(outbox)', 'sqlite', true],
    ['(SELECT 1) UNION (SELECT 2)', 'postgres', true],
    ['INSERT INTO t (a) VALUES ($1) RETURNING id', 'postgres', true],
    ['INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING RETURNING a', 'sqlite', true],
    ['WITH x AS (SELECT 1) SELECT * FROM x', 'postgres', true],
    ['WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n < 3) DELETE FROM t WHERE a IN (SELECT n FROM x)', 'postgres', false],
    ['WITH moved AS (DELETE FROM a RETURNING *) INSERT INTO b SELECT * FROM moved', 'postgres', false],
    ['INSERT INTO t SELECT * FROM unnest($1::text[]) WHERE true', 'postgres', false],
    ['UPDATE t SET note = \'RETURNING\' WHERE id = $1', 'postgres', false],
    ['UPDATE t SET note = E\'it\\\'s RETURNING\' WHERE id = $1', 'postgres', false],
    ['UPDATE t SET note = $tag$ RETURNING $tag$ WHERE id = $1', 'postgres', false],
    ['UPDATE t SET "returning" = 1 -- RETURNING x\n WHERE id = $1', 'postgres', false],
    ["UPDATE t SET note = 'it\\'s RETURNING' WHERE id = ?", 'mysql', false],
    ['UPDATE `returning` SET a = 1 # RETURNING', 'mysql', false],
    ['SAVEPOINT outboxer_probe', 'mysql', false],
    ['BEGIN', 'sqlite', false],
    ['DO 0', 'mysql', false],
    ['', 'postgres', false],
  ] as const)('%s (%s): %s', (sql, dialect, rows) => {
    expect(returnsRows(sql, dialect)).toBe(rows);
  });
});

class Rollback extends Error {}

describe.each(['postgres', 'mariadb', 'sqlite'] as const)('fromPrisma on %s: an enqueue not awaited, then the transaction rolls back', (database) => {
  let backend: PrismaBackend | undefined;
  afterEach(async () => {
    await backend?.cleanup();
    backend = undefined;
  });
  const floatingRig = async (rollBack: (tx: ShopTransaction) => Promise<void>): Promise<FloatingEnqueueRig> => {
    const { prisma, store, controls } = (backend = await backends[database]());
    return {
      outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
      rowCount: () => controls.rowCount(),
      rollBackAfter: (turns, enqueue) =>
        prisma
          .$transaction(async (tx) => {
            enqueue(fromPrisma(tx));
            await microtaskTurns(turns);
            await rollBack(tx);
          })
          .then(
            () => expect.fail('the transaction was to roll back'),
            () => undefined,
          ),
      commit: (work) => prisma.$transaction((tx) => work(fromPrisma(tx))),
    };
  };
  const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
  // Prisma still counts the transaction open: only the driver knows it ended
  const rawRollback = async (tx: ShopTransaction) => {
    await tx.$executeRawUnsafe('ROLLBACK');
    throw new Rollback('and let Prisma end it too');
  };

  it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {

    await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));

  });


  for (const idempotent of [false, true]) {
    const keyed = idempotent ? ' (with an idempotency key)' : '';
    it(`commits nothing when the callback throws right after it${keyed}`, async () => {
      await expectNothingCommittedAlone(await floatingRig(throwFromCallback), { idempotent });
    });
    it(`commits nothing when a raw ROLLBACK ends the transaction behind Prisma${keyed}`, async () => {
      await expectNothingCommittedAlone(await floatingRig(rawRollback), { idempotent });
    });
  }
});
