import { DummyDriver, Kysely, MssqlAdapter, MssqlIntrospector, MssqlQueryCompiler, sql, type Transaction } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { fromKysely } from '../../src/adapters/kysely/index.js';
import { kyselyBackends, type KyselyBackend, type Shop } from './kysely-adapter-rigs.js';

describe.each(['postgres', 'mariadb', 'sqlite'] as const)('fromKysely on %s', (database) => {
  let backend: KyselyBackend | undefined;
  afterEach(async () => {
    await backend?.cleanup();
    backend = undefined;
  });
  const setup = async () => (backend = await kyselyBackends[database]());

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
        await trx
          .rollback()
          .execute()
          .catch(() => undefined);
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
