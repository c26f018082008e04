import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { defineTransaction, type OutboxTransaction, type SqlDialect } from '../../src/core/ports/outbox-transaction.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { fromPglite } from '../../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { freshSqliteFile, type FreshSqliteFile } from '../support/sqlite-file.js';

const message = { topic: 'orders.paid', type: 'order.paid', payload: { orderId: 1 } };
const refused = { code: 'OUTBOXER_NOT_IN_TRANSACTION' };

/** A transaction handle whose driver cannot vouch for anything: the store must ask the database. */
function unvouched<D extends SqlDialect>(
  dialect: D,
  query: (sql: string, params: readonly unknown[]) => Promise<{ rows: Record<string, unknown>[]; affectedRows: number }>,
): OutboxTransaction<D> {
  return defineTransaction({ dialect, source: 'a test handle', fix: 'Begin a transaction first.', query });
}

/** I1 for every kind of handle: whatever the store is given, it writes only inside an open transaction. */
describe('the proof that a handle is inside an open transaction', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const postgres = async (): Promise<PostgresFixture> => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    return fixture;
  };

  it('refuses a pg client checked out of the pool but not inside BEGIN, after COMMIT, and while its COMMIT is still queued', async () => {
    const fixture = await postgres();
    const outbox = new Outbox(fixture.store);
    const client = await fixture.pool.connect();
    try {
      await expect(outbox.enqueue(client, message)).rejects.toMatchObject(refused);
      await client.query('BEGIN');
      await outbox.enqueue(client, message);
      await client.query('COMMIT');
      await expect(outbox.enqueue(client, message)).rejects.toMatchObject(refused);
      await client.query('BEGIN');
      const commit = client.query('COMMIT'); // not awaited: the enqueue's statements queue behind it
      await expect(outbox.enqueue(client, { ...message, idempotencyKey: 'queued' })).rejects.toMatchObject(refused);
      await commit;
    } finally {
      client.release();
    }
    expect((await fixture.store.stats()).pending).toBe(1);
    expect((await fixture.pool.query(`SELECT count(*)::int AS n FROM "${fixture.schema}".outbox_idempotency`)).rows[0].n).toBe(0);
  });

  it('refuses a pg client whose transaction failed, naming the ROLLBACK it waits for', async () => {
    const fixture = await postgres();
    const client = await fixture.pool.connect();
    try {
      await client.query('BEGIN');
      await expect(client.query('SELECT 1/0')).rejects.toThrow();
      await expect(new Outbox(fixture.store).enqueue(client, message)).rejects.toMatchObject({ ...refused, message: expect.stringContaining('ROLLBACK') });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('refuses a pg client whose COMMIT just failed (a deferred constraint), even before its new status arrived', async () => {
    const fixture = await postgres();
    const outbox = new Outbox(fixture.store);
    await fixture.pool.query(`CREATE TABLE "${fixture.schema}".once (id int UNIQUE DEFERRABLE INITIALLY DEFERRED)`);
    const client = await fixture.pool.connect();
    try {
      for (let round = 0; round < 20; round++) {
        await client.query('BEGIN');
        await client.query(`INSERT INTO "${fixture.schema}".once VALUES (1), (1)`);
        const enqueued = client.query('COMMIT').then(
          () => 'committed',
          () =>
            outbox.enqueue(client, message).then(
              () => 'enqueued',
              (error: { code?: string }) => error.code,
            ),
        );
        expect(await enqueued).toBe('OUTBOXER_NOT_IN_TRANSACTION');
      }
    } finally {
      client.release();
    }
    expect((await fixture.store.stats()).pending).toBe(0);
  });

  it('proves an unvouched PostgreSQL handle in the database: inside BEGIN it writes, outside it writes nothing', async () => {
    const fixture = await postgres();
    const outbox = new Outbox(fixture.store);
    const client = await fixture.pool.connect();
    const handle = unvouched('postgres', async (text, params) => {
      const result = await client.query(text, [...params]);
      return { rows: result.rows, affectedRows: result.rowCount ?? 0 };
    });
    try {
      await expect(outbox.enqueueMany(handle, [message, { ...message, idempotencyKey: 'k' }])).rejects.toMatchObject(refused);
      expect(await fixture.store.stats()).toMatchObject({ pending: 0 });
      await client.query('BEGIN');
      await outbox.enqueueMany(handle, [message, { ...message, idempotencyKey: 'k' }]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect((await fixture.store.stats()).pending).toBe(2);
    // on a pool each statement may run on another connection, and none of them is in a transaction
    const pooled = unvouched('postgres', async (text, params) => {
      const result = await fixture.pool.query(text, [...params]);
      return { rows: result.rows, affectedRows: result.rowCount ?? 0 };
    });
    await expect(outbox.enqueue(pooled, message)).rejects.toMatchObject(refused);
    expect((await fixture.store.stats()).pending).toBe(2);
  });

  it('writes nothing when an enqueue that was not awaited loses the race with a ROLLBACK (pg client, and the tx of outbox.transaction)', async () => {
    const fixture = await postgres();
    const outbox = new Outbox(fixture.store);
    const client = await fixture.pool.connect();
    try {
      await client.query('BEGIN');
      const enqueued = outbox.enqueue(client, { ...message, idempotencyKey: 'raced' }).catch((error: { code?: string }) => error.code);
      await client.query('ROLLBACK');
      await enqueued;
    } finally {
      client.release();
    }
    let forgotten: Promise<unknown> | undefined;
    await expect(
      outbox.transaction(fromPgPool(fixture.pool), async (tx) => {
        forgotten = outbox.enqueue(tx, message).catch(() => undefined);
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    await forgotten;
    expect((await fixture.store.stats()).pending).toBe(0);
  });

  it('does not take a session value of its setting for the probe: an unvouched handle outside a transaction is still refused', async () => {
    const fixture = await postgres();
    const client = await fixture.pool.connect();
    try {
      await client.query("SET outboxer.in_transaction = 'on'");
      const handle = unvouched('postgres', async (text, params) => {
        const result = await client.query(text, [...params]);
        return { rows: result.rows, affectedRows: result.rowCount ?? 0 };
      });
      await expect(new Outbox(fixture.store).enqueue(handle, message)).rejects.toMatchObject(refused);
      await client.query('RESET outboxer.in_transaction');
    } finally {
      client.release();
    }
    expect((await fixture.store.stats()).pending).toBe(0);
  });

  it('refuses a PGlite transaction kept after it committed', async () => {
    const db = new PGlite();
    cleanups.push(() => db.close());
    const store = new PostgresOutboxStore(fromPglite(db));
    await store.migrate();
    const outbox = new Outbox(store);
    const kept = await db.transaction(async (tx) => {
      await outbox.enqueue(tx, message);
      return tx;
    });
    await expect(outbox.enqueue(kept, message)).rejects.toMatchObject(refused);
    expect((await store.stats()).pending).toBe(1);
  });

  it('refuses a transaction of another database with OUTBOXER_WRONG_DIALECT', async () => {
    const fixture = await postgres();
    const mysqlShaped = unvouched('mysql', () => Promise.reject(new Error('never run')));
    await expect(new Outbox(fixture.store).enqueue(mysqlShaped, message)).rejects.toMatchObject({ code: 'OUTBOXER_WRONG_DIALECT' });
  });

  it('proves an unvouched MariaDB handle with @@in_transaction: inside a transaction or with autocommit off it writes', async () => {
    const fresh: FreshMysqlDatabase = await freshMysqlDatabase('proof');
    cleanups.push(() => fresh.cleanup());
    const store = new MysqlOutboxStore(fresh.database);
    await store.migrate();
    const outbox = new Outbox(store);
    const connection = await fresh.pool.getConnection();
    cleanups.push(async () => connection.release());
    const handle = unvouched('mysql', async (sql, params) => {
      const [result] = await connection.query({ sql, values: [...params] });
      return Array.isArray(result)
        ? { rows: result as Record<string, unknown>[], affectedRows: 0 }
        : { rows: [], affectedRows: Number((result as { affectedRows: number }).affectedRows) };
    });
    await expect(outbox.enqueue(handle, { ...message, idempotencyKey: 'k' })).rejects.toMatchObject(refused);
    await connection.beginTransaction();
    await outbox.enqueue(handle, { ...message, idempotencyKey: 'k' });
    await connection.commit();
    await connection.query('SET autocommit = 0');
    await outbox.enqueue(handle, message);
    await connection.rollback();
    await connection.query('SET autocommit = 1');
    expect(Number((await fresh.sql('SELECT count(*) AS n FROM outbox'))[0]?.n)).toBe(1);
  });

  it('MariaDB: an enqueue not awaited before a ROLLBACK writes nothing, and a batch that failed halfway keeps no key of it', async () => {
    const fresh: FreshMysqlDatabase = await freshMysqlDatabase('race');
    cleanups.push(() => fresh.cleanup());
    const store = new MysqlOutboxStore(fresh.database);
    await store.migrate();
    const outbox = new Outbox(store);
    const connection = await fresh.pool.getConnection();
    cleanups.push(async () => connection.release());
    await connection.beginTransaction();
    const enqueued = outbox.enqueue(connection, { ...message, idempotencyKey: 'raced' }).catch(() => undefined);
    await connection.rollback();
    await enqueued;
    let forgotten: Promise<unknown> | undefined;
    await expect(
      outbox.transaction(fresh.database, async (tx) => {
        forgotten = outbox.enqueue(tx, message).catch(() => undefined);
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    await forgotten;
    expect(Number((await fresh.sql('SELECT count(*) AS n FROM outbox'))[0]?.n)).toBe(0);

    const [taken] = await outbox.transaction(fresh.database, (tx) => outbox.enqueueMany(tx, [message]));
    await connection.beginTransaction();
    // the second message reuses an id: its INSERT fails after the first one's key was reserved
    await expect(
      outbox.enqueueMany(connection, [
        { ...message, idempotencyKey: 'order-1' },
        { ...message, id: taken },
      ]),
    ).rejects.toThrow();
    await connection.commit(); // the caller caught the error and committed the rest of its work
    const id = await outbox.transaction(fresh.database, (tx) => outbox.enqueue(tx, { ...message, idempotencyKey: 'order-1' }));
    expect(await fresh.sql('SELECT id FROM outbox WHERE id = ?', [id])).toEqual([{ id }]);
  });

  it('SQLite: an enqueue not awaited before a ROLLBACK writes nothing', async () => {
    const file: FreshSqliteFile = freshSqliteFile('race');
    cleanups.push(() => file.cleanup());
    const store = new SqliteOutboxStore(file.database());
    await store.migrate();
    const outbox = new Outbox(store);
    const db = file.connect();
    db.exec('BEGIN IMMEDIATE');
    const enqueued = outbox.enqueue(db, message).catch(() => undefined);
    db.exec('ROLLBACK');
    await enqueued;
    expect(db.inTransaction).toBe(false);
    expect(db.prepare('SELECT count(*) AS n FROM outbox').get()).toEqual({ n: 0 });
  });

  it('proves an unvouched SQLite handle with a BEGIN that fails inside a transaction, and leaves a refused one outside any', async () => {
    const file: FreshSqliteFile = freshSqliteFile('proof');
    cleanups.push(() => file.cleanup());
    const store = new SqliteOutboxStore(file.database());
    await store.migrate();
    const outbox = new Outbox(store);
    const db = file.connect();
    const handle = unvouched('sqlite', async (sql, params) => {
      const statement = db.prepare(sql);
      return statement.reader
        ? { rows: statement.all(...params) as Record<string, unknown>[], affectedRows: 0 }
        : { rows: [], affectedRows: statement.run(...params).changes };
    });
    await expect(outbox.enqueue(handle, message)).rejects.toMatchObject(refused);
    expect(db.inTransaction).toBe(false);
    db.exec('BEGIN IMMEDIATE');
    await outbox.enqueue(handle, message);
    db.exec('COMMIT');
    expect(db.prepare('SELECT count(*) AS n FROM outbox').get()).toEqual({ n: 1 });
  });
});
