import Database from 'better-sqlite3';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as betterSqliteDrizzle } from 'drizzle-orm/better-sqlite3';
import { drizzle as mysql2Drizzle } from 'drizzle-orm/mysql2';
import { drizzle as nodePgDrizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { integer, PgDialect, pgSchema, text } from 'drizzle-orm/pg-core';
import { drizzle as pgliteDrizzle, type PgliteDatabase } from 'drizzle-orm/pglite';
import { PgProxyTransaction, drizzle as pgProxyDrizzle } from 'drizzle-orm/pg-proxy';
import { drizzle as sqliteProxyDrizzle } from 'drizzle-orm/sqlite-proxy';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { betterSqliteTransaction, fromDrizzle } from '../../src/adapters/drizzle/index.js';
import { ConfigurationError, OutboxerError } from '../../src/core/errors.js';
import { Outbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { fromPglite } from '../../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { services, uniqueName } from '../support/services.js';
import { postgresTestControls } from '../support/dialects/postgres/postgres-test-controls.js';
import { closeSharedPglite, defined, message, pgliteInstance, refusedAsNotInTransaction, type PostgresTx } from './drizzle-adapter-rigs.js';

afterAll(closeSharedPglite);

/** What only Drizzle's adapter does: its type-level refusals, where statements go, and each driver's word on status. */
describe('fromDrizzle', () => {
  describe('refusals', () => {
    it('refuses the root database at compile time and at once at run time, naming the fix, on every dialect', async () => {
      const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
      const mysqlPool = mysql.createPool({ uri: services.mysqlUrl, connectionLimit: 1 });
      const connection = new Database(':memory:');
      try {
        const nodePg = nodePgDrizzle({ client: pool });
        // @ts-expect-error the root database is no PgTransaction: it has neither rollback() nor nestedIndex
        const refuse = () => fromDrizzle(nodePg);
        expect(refuse).toThrow(OutboxerError);
        expect(refuse).toThrow(refusedAsNotInTransaction);
        expect(refuse).toThrow(
          'fromDrizzle was given the Drizzle database itself (NodePgDatabase), not a transaction: each statement on it commits on its own, so the message ' +
            'would be stored even if your transaction rolled back. Enqueue inside the callback of db.transaction(async (tx) => { ...; ' +
            'await outbox.enqueue(fromDrizzle(tx), message); }) and pass that tx, not db.',
        );
        const pglite = pgliteDrizzle({ client: await pgliteInstance() });
        // @ts-expect-error the root database is no PgTransaction
        expect(() => fromDrizzle(pglite)).toThrow(/the Drizzle database itself \(PgliteDatabase\), not a transaction/);
        const mysql2 = mysql2Drizzle({ client: mysqlPool });
        // @ts-expect-error the root database is no MySqlTransaction
        expect(() => fromDrizzle(mysql2)).toThrow(/the Drizzle database itself \(MySql2Database\), not a transaction/);
        const betterSqlite = betterSqliteDrizzle({ client: connection });
        // @ts-expect-error the root database is not the tx of betterSqliteTransaction
        expect(() => fromDrizzle(betterSqlite)).toThrow(
          /the Drizzle database itself \(BetterSQLite3Database\), not a transaction.*betterSqliteTransaction\(db, async \(tx\) => \{ \.\.\.; await outbox\.enqueue\(fromDrizzle\(tx\), message\); \}\)/,
        );
      } finally {
        await pool.end();
        await mysqlPool.end();
        connection.close();
      }
    });

    it("refuses Drizzle's own synchronous better-sqlite3 transaction at compile time and at once, naming betterSqliteTransaction", () => {
      const connection = new Database(':memory:');
      try {
        betterSqliteDrizzle({ client: connection }).transaction((tx) => {
          // @ts-expect-error a synchronous transaction has committed before an awaited enqueue runs
          const refuse = () => fromDrizzle(tx);
          expect(refuse).toThrow(refusedAsNotInTransaction);
          expect(refuse).toThrow(/synchronous: it commits as soon as its callback returns.*betterSqliteTransaction\(db, async \(tx\) =>/);
        });
      } finally {
        connection.close();
      }
    });

    it('refuses what is no Drizzle object at all', () => {
      for (const value of [null, undefined, 42, {}, { query: () => Promise.resolve({ rows: [] }) }]) {
        expect(() => fromDrizzle(value as never)).toThrow(refusedAsNotInTransaction);
      }
      expect(() => fromDrizzle({} as never)).toThrow(/^fromDrizzle was given an object \(Object\), not a Drizzle transaction\. Enqueue inside/);
    });

    it('refuses a transaction of a driver whose connection it does not reach, naming those it does', async () => {
      // Drizzle's pg-proxy driver runs no transactions itself: its transaction class over its session stands for any other driver's
      const onProxy = new PgProxyTransaction(new PgDialect(), pgProxyDrizzle(async () => ({ rows: [] }))._.session, undefined);
      const refuse = () => fromDrizzle(onProxy);
      expect(refuse).toThrow(ConfigurationError);
      expect(refuse).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION' }));
      expect(refuse).toThrow(
        "fromDrizzle supports Drizzle's node-postgres and PGlite drivers (PostgreSQL), mysql2 (MariaDB/MySQL) and better-sqlite3 (SQLite); " +
          "this PostgreSQL transaction runs on Drizzle's PgRemoteSession",
      );
      const sqliteProxy = sqliteProxyDrizzle(async () => ({ rows: [] }));
      await sqliteProxy.transaction(async (tx) => {
        // @ts-expect-error on SQLite only the tx of betterSqliteTransaction is taken
        expect(() => fromDrizzle(tx)).toThrow(/this SQLite transaction runs on Drizzle's SQLiteRemoteSession/);
      });
      // @ts-expect-error betterSqliteTransaction takes a Drizzle database of the better-sqlite3 driver
      await expect(betterSqliteTransaction(sqliteProxy, async () => undefined)).rejects.toThrow(ConfigurationError);
    });
  });

  describe('on PostgreSQL (node-postgres)', () => {
    const schema = uniqueName('drizzle');
    const notes = pgSchema(schema).table('notes', { id: integer('id').primaryKey(), body: text('body') });
    let pool: pg.Pool;
    let db: NodePgDatabase;
    let outbox: Outbox<unknown, PostgresOutboxStore>;
    let outboxRows: () => Promise<number>;
    beforeAll(async () => {
      pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
      pool.on('error', () => undefined);
      const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
      await store.migrate();
      outbox = new Outbox(store);
      await pool.query(`CREATE TABLE "${schema}".notes (id int PRIMARY KEY, body text)`);
      db = nodePgDrizzle({ client: pool });
      outboxRows = postgresTestControls(async (text, params = []) => (await pool.query(text, params)).rows as Record<string, unknown>[], schema).rowCount;
    });
    afterAll(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    });
    const noteIds = async (ids: number[]) =>
      (await db.select({ id: notes.id }).from(notes).orderBy(notes.id)).map((row) => row.id).filter((id) => ids.includes(id));

    it('passes $n placeholders, a ? operator and PostgreSQL array parameters to the driver untouched, and reads plain rows', async () => {
      const ids = ['0190a3c5-9c4e-7c1a-8d7e-1f2a3b4c5d6e', '0190a3c5-9c4e-7c1a-8d7e-1f2a3b4c5d6f'];
      await db.transaction(async (tx) => {
        const onTx = fromDrizzle(tx);
        expect(onTx.dialect).toBe('postgres');
        const arrays = await onTx.query('SELECT id, n FROM unnest($1::text[], $2::int[]) AS t(id, n) ORDER BY n', [
          ['a', 'b', null],
          [1, 2, 3],
        ]);
        expect(arrays.rows).toEqual([
          { id: 'a', n: 1 },
          { id: 'b', n: 2 },
          { id: null, n: 3 },
        ]);
        const scalars = await onTx.query(
          `SELECT '{"a": 1}'::jsonb ? $1 AS has_key, $2::bigint AS big, $3::boolean AS yes, $4::bytea AS bytes, $5::uuid[] AS ids`,
          ['a', 2n ** 62n, true, new Uint8Array([0, 255]), ids],
        );
        expect(scalars.rows).toEqual([{ has_key: true, big: (2n ** 62n).toString(), yes: true, bytes: Buffer.from([0, 255]), ids }]);
      });
    });

    it('runs on the transaction itself: its rows commit and roll back with it, and affectedRows counts them', async () => {
      await db.transaction(async (tx) => {
        const written = await fromDrizzle(tx).query(`INSERT INTO "${schema}".notes (id, body) VALUES ($1, $2), ($3, $4)`, [1, 'kept', 2, 'kept']);
        expect(written).toEqual({ rows: [], affectedRows: 2 });
        expect((await tx.select().from(notes)).map((row) => row.id)).toEqual([1, 2]);
        expect(await noteIds([1, 2])).toEqual([]);
      });
      const rolledBack = db.transaction(async (tx) => {
        await fromDrizzle(tx).query(`INSERT INTO "${schema}".notes (id, body) VALUES ($1, $2)`, [3, 'gone']);
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      expect(await noteIds([1, 2, 3])).toEqual([1, 2]);
    });

    it("prepares a named statement on the transaction's client", async () => {
      await db.transaction(async (tx) => {
        const onTx = fromDrizzle(tx);
        const name = uniqueName('outboxer_drizzle');
        await onTx.query('SELECT $1::int + 1 AS next', [1], { name });
        const prepared = await onTx.query('SELECT statement FROM pg_prepared_statements WHERE name = $1', [name]);
        expect(prepared.rows).toEqual([{ statement: 'SELECT $1::int + 1 AS next' }]);
        expect((await onTx.query('SELECT $1::int + 1 AS next', [41], { name })).rows).toEqual([{ next: 42 }]);
      });
    });

    it("reports node-postgres' transaction status: open, failed after an error (refused), closed once it ended", async () => {
      let kept: OutboxTransaction | undefined;
      await db.transaction(async (tx) => {
        kept = fromDrizzle(tx);
        expect(kept.status?.()).toBe('open');
        // pg rejects at the ErrorResponse; the status ('E') comes with the ReadyForQuery after it
        const client = (tx as unknown as { session: { client: { connection: { once(event: 'readyForQuery', listener: () => void): unknown } } } }).session
          .client;
        const statusArrived = new Promise<void>((resolve) => client.connection.once('readyForQuery', resolve));
        await expect(kept.query('SELECT 1 / 0', [])).rejects.toThrow(/division by zero/);
        await statusArrived;
        expect(kept.status?.()).toBe('failed');
        await expect(outbox.enqueue(kept, message(1))).rejects.toThrow(
          expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringMatching(/failed/) }),
        );
      });
      expect(defined(kept).status?.()).toBe('closed');
      expect(await outboxRows()).toBe(0);
    });

    it('reports closed when a raw COMMIT ended the transaction behind Drizzle, and the store writes nothing', async () => {
      await db.transaction(async (tx) => {
        await tx.execute(sql`commit`);
        const ended = fromDrizzle(tx);
        expect(ended.status?.()).toBe('closed');
        await expect(outbox.enqueue(ended, message(2))).rejects.toThrow(refusedAsNotInTransaction);
      });
      expect(await outboxRows()).toBe(0);
    });

    it('refuses a kept transaction once its pooled client serves another transaction, writing nothing into that one', async () => {
      const single = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
      const onOneClient = nodePgDrizzle({ client: single });
      try {
        let keptTx: PostgresTx | undefined;
        let keptAdapter: OutboxTransaction | undefined;
        await onOneClient.transaction(async (tx) => {
          keptTx = tx;
          keptAdapter = fromDrizzle(tx);
          expect(keptAdapter.status?.()).toBe('open');
        });
        await onOneClient.transaction(async (other) => {
          await other.insert(notes).values({ id: 20, body: 'other' });
          const pid = sql`SELECT pg_backend_pid() AS pid`;
          // the same client, inside the other transaction: the protocol alone would say 'open'
          expect((await defined(keptTx).execute(pid)).rows).toEqual((await other.execute(pid)).rows);
          for (const late of [defined(keptAdapter), fromDrizzle(defined(keptTx))]) {
            expect(late.status?.()).toBe('closed');
            await expect(late.query(`INSERT INTO "${schema}".notes (id, body) VALUES ($1, $2)`, [21, 'late'])).rejects.toThrow(
              /its client went back to the pool/,
            );
            await expect(outbox.enqueue(late, message(3))).rejects.toThrow(refusedAsNotInTransaction);
          }
        });
      } finally {
        await single.end();
      }
      expect(await noteIds([20, 21])).toEqual([20]);
      expect(await outboxRows()).toBe(0);
    });

    it('takes transactions of a database with a relational schema, and their savepoints', async () => {
      const withSchema = nodePgDrizzle({ client: pool, schema: { notes } });
      await withSchema.transaction(async (tx) => {
        expect(fromDrizzle(tx).dialect).toBe('postgres');
        await tx.transaction(async (savepoint) => {
          expect(fromDrizzle(savepoint).status?.()).toBe('open');
        });
      });
    });
  });

  describe('on PGlite', () => {
    const schema = uniqueName('drizzle');
    const notes = pgSchema(schema).table('notes', { id: integer('id').primaryKey(), body: text('body') });
    let pglite: PGlite;
    let db: PgliteDatabase;
    let outbox: Outbox<unknown, PostgresOutboxStore>;
    let outboxRows: () => Promise<number>;
    beforeAll(async () => {
      pglite = await pgliteInstance();
      const store = new PostgresOutboxStore(fromPglite(pglite), { schema });
      await store.migrate();
      outbox = new Outbox(store);
      await pglite.exec(`CREATE TABLE "${schema}".notes (id int PRIMARY KEY, body text)`);
      db = pgliteDrizzle({ client: pglite });
      outboxRows = postgresTestControls(async (text, params = []) => (await pglite.query<Record<string, unknown>>(text, params)).rows, schema).rowCount;
    });
    afterAll(async () => void (await pglite.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)));

    it('binds PostgreSQL arrays, bigints and bytes on the transaction itself, rolled back with it', async () => {
      const rolledBack = db.transaction(async (tx) => {
        const onTx = fromDrizzle(tx);
        expect(onTx.dialect).toBe('postgres');
        const arrays = await onTx.query('SELECT id, n FROM unnest($1::text[], $2::int[]) AS t(id, n) ORDER BY n', [
          ['a', 'b', null],
          [1, 2, 3],
        ]);
        expect(arrays.rows).toEqual([
          { id: 'a', n: 1 },
          { id: 'b', n: 2 },
          { id: null, n: 3 },
        ]);
        const scalars = await onTx.query('SELECT $1::bigint::text AS big, $2::boolean AS yes, $3::bytea AS bytes', [2n ** 62n, true, new Uint8Array([0, 255])]);
        expect(scalars.rows).toEqual([{ big: (2n ** 62n).toString(), yes: true, bytes: new Uint8Array([0, 255]) }]);
        expect(await onTx.query(`INSERT INTO "${schema}".notes (id, body) VALUES ($1, $2)`, [1, 'gone'])).toEqual({ rows: [], affectedRows: 1 });
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      expect(await db.select().from(notes)).toEqual([]);
    });

    it('leaves the status to the store while PGlite counts the transaction open, and reports closed once it ended', async () => {
      let kept: OutboxTransaction | undefined;
      await db.transaction(async (tx) => {
        kept = fromDrizzle(tx);
        expect(kept.status?.()).toBeUndefined();
        expect(await outbox.enqueue(kept, message(1))).toBeTypeOf('string');
      });
      expect(defined(kept).status?.()).toBe('closed');
      await expect(outbox.enqueue(defined(kept), message(2))).rejects.toThrow(refusedAsNotInTransaction);
      expect(await outboxRows()).toBe(1);
    });

    it("refuses, by the store's probe in the database, a transaction a raw COMMIT ended behind PGlite", async () => {
      const before = await outboxRows();
      await db.transaction(async (tx) => {
        await tx.execute(sql`commit`);
        const ended = fromDrizzle(tx);
        expect(ended.status?.()).toBeUndefined();
        await expect(outbox.enqueue(ended, message(3))).rejects.toThrow(refusedAsNotInTransaction);
      });
      expect(await outboxRows()).toBe(before);
    });
  });
});
