import mysql from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { Outbox } from '../../src/core/outbox.js';
import { validateMessage } from '../../src/core/validate-message.js';
import { fromMysqlPool, type MysqlPoolLike, type MysqlQueryable } from '../../src/stores/mysql/database.js';
import { mysqlMigrations } from '../../src/stores/mysql/migrations.js';
import { MysqlOutboxStore, type MysqlStoreOptions, type MysqlTransaction } from '../../src/stores/mysql/mysql-store.js';
import { freshMysqlDatabase, testPoolOptions, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const limits = { maxPayloadBytes: 256 * 1024 };
const message = { topic: 'orders.paid', type: 'order.paid', payload: { orderId: 1 } };
const msg = (extra: Record<string, unknown> = {}) => validateMessage({ ...message, ...extra }, limits);

/** A mysql2 pool outside the fresh database's, ended by the test. */
const poolOf = (uri: string, extra: Record<string, unknown> = {}) => mysql.createPool({ uri, connectionLimit: 2, ...extra });

async function rejection(action: Promise<unknown>): Promise<{ code?: string; message: string }> {
  const error: unknown = await action.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof Error) return error as Error & { code?: string };
  throw new Error('expected a rejection, got a result');
}

describe('MariaDB writer, schema and start check', () => {
  let fresh: FreshMysqlDatabase | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await fresh?.cleanup();
    fresh = undefined;
  });
  const setup = async (options: MysqlStoreOptions = {}) => {
    fresh = await freshMysqlDatabase('writer');
    const store = new MysqlOutboxStore(fresh.database, options);
    await store.migrate();
    const count = async () => Number((await fresh!.sql('SELECT COUNT(*) AS n FROM `outbox`'))[0]?.n);
    return { fresh, store, count };
  };
  const connection = async (f: FreshMysqlDatabase) => {
    const conn = await f.pool.getConnection();
    cleanups.push(async () => conn.release());
    return conn;
  };

  it("stores in the caller's mysql2 transaction when it commits, and nothing when it rolls back", async () => {
    const { fresh: f, store, count } = await setup();
    const outbox = new Outbox<MysqlTransaction>(store);
    const conn = await connection(f);
    await conn.beginTransaction();
    await outbox.enqueue(conn as unknown as MysqlQueryable, message);
    await conn.rollback();
    expect(await count()).toBe(0);
    await conn.beginTransaction();
    const id = await outbox.enqueue(conn as unknown as MysqlQueryable, message);
    expect(await count()).toBe(0); // not yet committed: invisible to other connections
    await conn.commit();
    expect(await f.sql('SELECT id FROM `outbox`')).toEqual([{ id }]);
    await outbox.transaction(f.database, (tx) => outbox.enqueue(tx, message));
    expect(await count()).toBe(2);
  });

  it('refuses a pool and a connection outside beginTransaction, storing nothing; takes one with autocommit off', async () => {
    const { fresh: f, store, count } = await setup();
    for (const tx of [f.pool, f.pool.pool]) {
      const error = await rejection(store.insert(tx as unknown as MysqlTransaction, [msg()]));
      expect(error.code).toBe('OUTBOXER_NOT_IN_TRANSACTION');
      expect(error.message).toContain('beginTransaction()');
    }
    const conn = await connection(f);
    const outside = await rejection(store.insert(conn as unknown as MysqlQueryable, [msg()]));
    expect(outside).toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringContaining('outside any transaction') });
    expect(await count()).toBe(0);
    await conn.query('SET autocommit = 0');
    await store.insert(conn as unknown as MysqlQueryable, [msg()]);
    await conn.rollback();
    await conn.query('SET autocommit = 1');
    expect(await count()).toBe(0);
  });

  it('keeps input order across a batch split into several statements, and binary bodies as bytes', async () => {
    const { fresh: f, store } = await setup();
    const bytes = Uint8Array.from([0, 0xff, 0x80, 0x27, 0x5c, 0]);
    const batch = Array.from({ length: 1203 }, (_, i) =>
      i % 100 === 7 ? msg({ payload: bytes, contentType: 'application/x-protobuf' }) : msg({ key: `k${i % 5}` }),
    );
    await f.database.transaction((tx) => store.insert(tx, batch));
    const rows = await f.sql('SELECT id, payload_bytes FROM `outbox` ORDER BY seq');
    expect(rows.map((r) => r.id)).toEqual(batch.map((m) => m.id));
    expect([...(rows[7]?.payload_bytes as Buffer)]).toEqual([...bytes]);
  });

  it('sets due_at on the server clock from availableAt or delayMs, whatever the pool timezone', async () => {
    const { fresh: f, store } = await setup();
    const pool = poolOf(f.url, { timezone: '+05:00' });
    cleanups.push(() => pool.end());
    const at = new Date(Date.now() + 3_600_000 + 123);
    const past = new Date(Date.now() - 60_000);
    const [later, earlier, delayed, now] = [msg({ availableAt: at }), msg({ availableAt: past }), msg({ delayMs: 600_000 }), msg()];
    await fromMysqlPool(pool as unknown as MysqlPoolLike).transaction((tx) => store.insert(tx, [later!, earlier!, delayed!, now!]));
    const rows = await f.sql(`SELECT id, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', due_at) DIV 1000 AS due_ms,
      TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), due_at) DIV 1000 AS due_in_ms FROM \`outbox\` ORDER BY seq`);
    expect(Number(rows[0]?.due_ms)).toBe(at.getTime());
    expect(Number(rows[1]?.due_ms)).toBe(past.getTime());
    expect(Number(rows[2]?.due_in_ms)).toBeGreaterThan(590_000);
    expect(Number(rows[2]?.due_in_ms)).toBeLessThanOrEqual(600_000);
    expect(rows[3]?.due_ms).toBeNull();
    expect(await store.stats()).toMatchObject({ pending: 2, scheduled: 2 });
  });

  it('makes a concurrent insert of the same idempotency key wait, then answer the first id', async () => {
    const { fresh: f, store, count } = await setup();
    const [a, b] = [await connection(f), await connection(f)];
    const first = msg({ idempotencyKey: 'order-7' });
    const second = msg({ idempotencyKey: 'order-7' });
    await a.beginTransaction();
    expect(await store.insert(a as unknown as MysqlQueryable, [first])).toEqual([first.id]);
    await b.beginTransaction();
    await b.query('SELECT COUNT(*) FROM `outbox_idempotency`'); // b's snapshot predates a's commit
    const [[waiter]] = (await b.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number | string }]];
    let settled = false;
    const waiting = store.insert(b as unknown as MysqlQueryable, [second]).finally(() => (settled = true));
    waiting.catch(() => undefined); // awaited below; a failure before that must not go unhandled
    const reserving = async () => {
      const rows = await f.sql(`SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'INSERT INTO %outbox_idempotency%'`, [
        Number(waiter.id),
      ]);
      return rows.length === 1;
    };
    // the second insert is on the key's row, which the first transaction holds: it cannot end before that commits
    await waitFor(reserving, { what: 'the second insert to reach the idempotency key' });
    expect(settled).toBe(false);
    await a.commit();
    expect(await waiting).toEqual([first.id]);
    await b.commit();
    expect(await count()).toBe(1);
  });

  it('migrates once when three stores migrate together, with the partition count of the options', async () => {
    fresh = await freshMysqlDatabase('migrate');
    const f = fresh;
    const stores = [1, 2, 3].map(() => new MysqlOutboxStore(f.database, { partitionCount: 8 }));
    await Promise.all(stores.map((s) => s.migrate()));
    expect(await f.sql('SELECT table_name, version FROM `outboxer_migrations` ORDER BY version')).toEqual(
      mysqlMigrations.map((m) => ({ table_name: 'outbox', version: m.version })),
    );
    expect(Number((await f.sql('SELECT COUNT(*) AS n FROM `outbox_partitions`'))[0]?.n)).toBe(8);
    expect((await stores[0]!.relayGroup()).partitionCount).toBe(8);
    await stores[1]!.verify();
    expect(stores[2]!.migrationSql()).toContain('CREATE TABLE IF NOT EXISTS `outbox`');
  });

  it.each([
    [{ retainPublishedMs: -1 }, 'retainPublishedMs'],
    [{ retainPublishedMs: 1.5 }, 'retainPublishedMs'],
    [{ idempotencyWindowMs: 0 }, 'idempotencyWindowMs'],
    [{ partitionCount: 0 }, 'partitionCount'],
    [{ partitionCount: 1025 }, 'partitionCount'],
  ] as const)('refuses the options %o', (options, option) => {
    const database = fromMysqlPool({} as MysqlPoolLike);
    const error = (() => {
      try {
        new MysqlOutboxStore(database, options);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({ code: 'OUTBOXER_INVALID_OPTION', options: [option] });
  });

  describe('verify()', () => {
    const verifyAt = async (uri: string, extra: Record<string, unknown> = {}, server?: { host: string; port: number }) => {
      const pool = poolOf(uri, { connectTimeout: 1500, ...extra });
      const database = { ...fromMysqlPool(pool as unknown as MysqlPoolLike, { ownsPool: true }), ...(server === undefined ? {} : { server }) };
      const store = new MysqlOutboxStore(database);
      try {
        return await rejection(store.verify());
      } finally {
        await store.close();
      }
    };
    const withPath = (path: string, credentials?: string) => {
      const url = new URL(services.mysqlUrl);
      url.pathname = `/${path}`;
      if (credentials !== undefined) [url.username, url.password] = credentials.split(':') as [string, string];
      return url.toString();
    };

    it('names a wrong password, an unknown database and a table not migrated', async () => {
      expect(await verifyAt(withPath('test', 'root:not-the-password'))).toMatchObject({
        code: 'OUTBOXER_AUTH_FAILED',
        message: expect.stringContaining('check the user and password'),
      });
      const unknown = await verifyAt(withPath(uniqueName('nodb')));
      expect(unknown).toMatchObject({ code: 'OUTBOXER_DATABASE_NOT_FOUND' });
      fresh = await freshMysqlDatabase('verify');
      expect(await verifyAt(fresh.url)).toMatchObject({ code: 'OUTBOXER_NOT_MIGRATED', message: expect.stringContaining("run 'outboxer migrate'") });
      const store = new MysqlOutboxStore(fresh.database);
      await store.migrate();
      await expect(store.verify()).resolves.toBeUndefined();
    });

    it('tells a PostgreSQL port given as a mysql URL from an outage (the handle knows its address from the pool)', async () => {
      const postgres = new URL(services.postgresUrl);
      const server = { host: postgres.hostname, port: Number(postgres.port || 5432) };
      const url = `mysql://root@${server.host}:${server.port}/test`;
      expect(await verifyAt(url, {}, server)).toMatchObject({ code: 'OUTBOXER_WRONG_PROTOCOL', message: expect.stringContaining('PostgreSQL port') });
      // fromMysqlPool reads the address from the pool's own configuration
      expect(await verifyAt(url)).toMatchObject({ code: 'OUTBOXER_WRONG_PROTOCOL' });
      expect(await verifyAt('mysql://root@127.0.0.1:1/test', {}, { host: '127.0.0.1', port: 1 })).toMatchObject({ code: 'OUTBOXER_DATABASE_UNAVAILABLE' });
    });

    it('names the PROCESS grant when the user cannot read INNODB_TRX', async () => {
      const { fresh: f } = await setup();
      const user = uniqueName('np').slice(0, 30);
      await f.sql(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`);
      cleanups.push(() => f.sql(`DROP USER '${user}'@'%'`));
      await f.sql(`GRANT ALL ON \`${f.name}\`.* TO '${user}'@'%'`);
      const error = await verifyAt(withPath(f.name, `${user}:pw`), testPoolOptions);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error).toMatchObject({ code: 'OUTBOXER_PERMISSION_DENIED', message: expect.stringContaining(`GRANT PROCESS ON *.* TO '${user}'@'%'`) });
    });
  });
});
