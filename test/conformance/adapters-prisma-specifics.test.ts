import { PrismaPg } from '@prisma/adapter-pg';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fromPrisma } from '../../src/adapters/prisma/index.js';
import { returnsRows } from '../../src/adapters/prisma/returns-rows.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction, SqlDialect } from '../../src/core/ports/outbox-transaction.js';
import { ensureTestPrismaClients, prismaClientDirectories } from '../support/prisma/prisma-clients.js';
import type { PrismaClient as PostgresPrismaClient } from '../support/prisma/generated/postgresql/client.js';
import { services } from '../support/services.js';
import { prismaBackends, type PrismaBackend } from './prisma-adapter-rigs.js';

beforeAll(() => ensureTestPrismaClients(), 180_000);

describe.each(['postgres', 'mariadb', 'sqlite'] as const)('fromPrisma on %s', (database) => {
  let backend: PrismaBackend | undefined;
  afterEach(async () => {
    await backend?.cleanup();
    backend = undefined;
  });
  const setup = async () => (backend = await prismaBackends[database]());

  it('refuses the root client at once, naming the fix', async () => {
    const { prisma } = await setup();
    const attempt = () => fromPrisma(prisma as never);
    expect(attempt).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
    expect(attempt).toThrow(
      /the root PrismaClient, which runs each statement outside any transaction\. .*prisma\.\$transaction\(async \(tx\) => \{ await outbox\.enqueue\(fromPrisma\(tx\), message\)/,
    );
    expect(() => fromPrisma({} as never)).toThrow(/not a Prisma transaction client/);
  });

  it('tells the database from the driver adapter and runs statements in the transaction, rows keyed by column', async () => {
    const { prisma, dialect, orders } = await setup();
    const p = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');
    const seen = await prisma.$transaction(async (tx) => {
      await tx.order.create({ data: { id: 5, note: 'five' } });
      const outboxTx = fromPrisma(tx);
      expect(outboxTx.dialect).toBe(dialect);
      expect(outboxTx.source).toBe('a Prisma transaction client');
      expect(await outboxTx.query(`UPDATE ${orders} SET note = ${p(1)} WHERE id = ${p(2)}`, ['changed', 5])).toEqual({ rows: [], affectedRows: 1 });
      expect(await outboxTx.query(`INSERT INTO ${orders} (id, note) VALUES (${p(1)}, ${p(2)}), (${p(3)}, ${p(4)})`, [6, 'six', 7, 'seven'])).toEqual({
        rows: [],
        affectedRows: 2,
      });
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
        const sql =
          'SELECT cardinality($1::text[]) AS n, $2::uuid[] AS ids, $3::int8[] AS delays, $4::bytea AS bytes, $5::bytea AS buffer, $6::boolean AS yes, $7::int8 AS big, $8::text AS absent';
        return (
          await outboxTx.query(sql, [
            ['a', null, 'c'],
            ['0190a0d8-0000-7000-8000-000000000000'],
            [0, 3_600_000],
            bytes,
            Buffer.from('hi'),
            true,
            9007199254740993n,
            null,
          ])
        ).rows;
      }
      // hex(): Prisma's SQLite adapter cannot read back a BLOB that has no declared column type
      return (
        await outboxTx.query('SELECT ? AS yes, ? AS no, HEX(?) AS bytes, HEX(?) AS buffer, ? AS big, ? AS absent, ? AS text', [
          true,
          false,
          bytes,
          Buffer.from('hi'),
          9007199254740993n,
          null,
          'x',
        ])
      ).rows;
    });
    // Prisma decodes raw results itself: 64-bit integers as bigint, bytes as Uint8Array
    if (dialect === 'postgres') {
      expect(rows).toEqual([
        {
          n: 3,
          ids: ['0190a0d8-0000-7000-8000-000000000000'],
          delays: [0n, 3_600_000n],
          bytes,
          buffer: new Uint8Array(Buffer.from('hi')),
          yes: true,
          big: 9007199254740993n,
          absent: null,
        },
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
    await expect(inside.query('SELECT 1 AS one', [])).rejects.toMatchObject({
      code: 'OUTBOXER_NOT_IN_TRANSACTION',
      message: expect.stringMatching(/has ended\. Pass the tx/),
    });
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
    await expect(attempt).rejects.toMatchObject({
      code: 'OUTBOXER_INVALID_OPTION',
      message: expect.stringContaining(`told dialect '${other}', but this Prisma client runs on '${dialect}'`),
    });
  });
});

describe('fromPrisma and the types of the generated client', () => {
  it('does not compile with the root PrismaClient, extended or not; the tx of $transaction and of a nested one do', async () => {
    const { PrismaClient } = (await import(pathToFileURL(join(prismaClientDirectories.test('postgresql'), 'client.ts')).href)) as {
      PrismaClient: typeof PostgresPrismaClient;
    };
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
    expect(() => fromPrisma(sqlServer)).toThrow(
      /PostgreSQL \(provider "postgresql"\), MariaDB\/MySQL \("mysql"\) and SQLite \("sqlite"\); this client's provider is "sqlserver"/,
    );
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
    ["UPDATE t SET note = 'RETURNING' WHERE id = $1", 'postgres', false],
    ["UPDATE t SET note = E'it\\'s RETURNING' WHERE id = $1", 'postgres', false],
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
