import { randomUUID } from 'node:crypto';
import { MikroORM, TransactionPropagation } from '@mikro-orm/core';
import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { MariaDbKnexDialect, MySqlDriver } from '@mikro-orm/mysql';
import { afterEach, describe, expect, it } from 'vitest';
import { fromMikroOrm } from '../../src/adapters/mikro-orm/index.js';
import { Outbox } from '../../src/core/outbox.js';
import type { OutboxTransaction, TransactionStatus } from '../../src/core/ports/outbox-transaction.js';
import { services } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { DATABASES, openMariadb, openPostgres, openSqlite, ormOptions, Rollback, type MikroOrmDatabase, type OrmDatabase } from './mikro-orm-adapter-rigs.js';

/** What the adapter's own status says, asked at once (before the transaction's connection was resolved, it answers with a promise). */
async function statusOf(tx: OutboxTransaction): Promise<TransactionStatus | undefined> {
  return tx.status?.();
}

/** What the driver says inside an open transaction: pg and better-sqlite3 tell, mysql2 cannot (the store asks MariaDB). */
const OPEN_STATUS: Readonly<Record<OrmDatabase, TransactionStatus | undefined>> = { postgres: 'open', mariadb: undefined, sqlite: 'open' };

describe.each(DATABASES)('fromMikroOrm on %s: the port itself', (name, open) => {
  let database: MikroOrmDatabase | undefined;
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
      expect(() => fromMikroOrm(handle)).toThrow(
        expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringContaining('em.transactional(') }),
      );
    }
    expect(() => fromMikroOrm(orm.em)).toThrow(/global EntityManager \(orm\.em\)/);
  });
});

describe('fromMikroOrm: what each driver binds', () => {
  let database: MikroOrmDatabase | undefined;
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
      const named = [
        await tx.query('SELECT $1::int + 1 AS n', [1], { name: 'mko_plus_one' }),
        await tx.query('SELECT $1::int + 1 AS n', [41], { name: 'mko_plus_one' }),
      ];
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
      return (
        await tx.query(
          'SELECT ? AS text, HEX(?) AS buffer, HEX(?) AS bytes, ? + 1 AS big, ? AS yes, ? IS NULL AS missing, @@in_transaction AS in_transaction',
          ['a?b', Buffer.from([0, 255]), Uint8Array.from([1, 2]), 9007199254740993n, true, null],
        )
      ).rows;
    });
    expect(rows).toEqual([{ text: 'a?b', buffer: '00FF', bytes: '0102', big: '9007199254740994', yes: 1, missing: 1, in_transaction: 1 }]);
  });

  it('SQLite: ? placeholders, Uint8Arrays as blobs, bigint, booleans as 0/1 (better-sqlite3 binds no booleans)', async () => {
    database = await openSqlite();
    const rows = await database.orm.em.transactional(async (em) => {
      const tx = fromMikroOrm(em);
      return (
        await tx.query('SELECT ? AS text, hex(?) AS bytes, ? + 1 AS big, ? AS yes, ? AS no, ? IS NULL AS missing', [
          'a?b',
          Uint8Array.from([0, 255]),
          41n,
          true,
          false,
          null,
        ])
      ).rows;
    });
    expect(rows).toEqual([{ text: 'a?b', bytes: '00FF', big: 42, yes: 1, no: 0, missing: 1 }]);
  });
});

describe('fromMikroOrm: the driver has the last word on the transaction', () => {
  let database: MikroOrmDatabase | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });

  it.each(DATABASES)("%s: after a raw COMMIT behind MikroORM's back, the status no longer says open", async (name, open) => {
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
  });
});

describe('fromMikroOrm on MariaDB: a transaction ended by the server behind MikroORM', () => {
  let database: MikroOrmDatabase | undefined;
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
  let database: MikroOrmDatabase | undefined;
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
      await em.transactional(
        async (outside) => {
          expect(() => fromMikroOrm(outside)).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
        },
        { propagation: TransactionPropagation.NOT_SUPPORTED },
      );
      await outbox.enqueue(fromMikroOrm(em), { topic: 'orders.placed', type: 'order.placed', payload: {} });
      throw new Rollback('the outer transaction fails');
    });
    await expect(attempt).rejects.toBeInstanceOf(Rollback);
    expect(await postgres.sql(`SELECT topic FROM "${postgres.schema}".outbox`)).toEqual([{ topic: 'audit' }]);
  });
});

describe('fromMikroOrm: a handle kept past its commit', () => {
  let database: MikroOrmDatabase | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });

  it.each(DATABASES)('%s: cannot reach the connection the next transaction took from the pool (one connection: the same one)', async (_name, open) => {
    database = await open(1);
    const { orm, sql, placeholder, orders } = database;
    const kept = await orm.em.transactional(async (em) => fromMikroOrm(em));
    await orm.em.transactional(async (em) => {
      const next = fromMikroOrm(em);
      await next.query(`INSERT INTO ${orders} (id, note) VALUES (${placeholder}, 'next')`, [1]);
      expect(await kept.status?.()).toBe('closed');
      await expect(kept.query(`INSERT INTO ${orders} (id, note) VALUES (${placeholder}, 'kept')`, [2])).rejects.toMatchObject({
        code: 'OUTBOXER_NOT_IN_TRANSACTION',
      });
    });
    expect(await sql(`SELECT id, note FROM ${orders} ORDER BY id`)).toEqual([{ id: 1, note: 'next' }]);
  });
});

describe('fromMikroOrm: what it refuses before any statement', () => {
  let database: MikroOrmDatabase | undefined;
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
    const mariadb = await MikroORM.init({
      ...ormOptions,
      driver: MySqlDriver,
      clientUrl: services.mysqlUrl,
      driverOptions: { client: MariaDbKnexDialect },
      pool: { min: 0, max: 1 },
    });
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
