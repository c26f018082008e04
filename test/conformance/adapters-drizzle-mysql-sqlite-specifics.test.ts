import { eq, sql } from 'drizzle-orm';
import { drizzle as betterSqliteDrizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { int, mysqlTable, text as mysqlText } from 'drizzle-orm/mysql-core';
import { drizzle as mysql2Drizzle, type MySql2Database } from 'drizzle-orm/mysql2';
import { integer as sqliteInteger, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { betterSqliteTransaction, fromDrizzle, type DrizzleBetterSqliteTransaction } from '../../src/adapters/drizzle/index.js';
import { Outbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { freshSqliteFile, type FreshSqliteFile } from '../support/sqlite-file.js';
import { mysqlTestControls } from '../support/dialects/mariadb/mysql-test-controls.js';
import { sqliteTestControls } from '../support/dialects/sqlite/sqlite-test-controls.js';
import { defined, message, refusedAsNotInTransaction } from './drizzle-adapter-rigs.js';

/** What only Drizzle's adapter does: its type-level refusals, where statements go, and each driver's word on status. */
describe('fromDrizzle', () => {
  describe('on MariaDB (mysql2)', () => {
    const notes = mysqlTable('notes', { id: int('id').primaryKey(), body: mysqlText('body') });
    let fresh: FreshMysqlDatabase;
    let db: MySql2Database;
    let outbox: Outbox<unknown, MysqlOutboxStore>;
    let outboxRows: () => Promise<number>;
    beforeAll(async () => {
      fresh = await freshMysqlDatabase('drizzle');
      const store = new MysqlOutboxStore(fresh.database);
      await store.migrate();
      outbox = new Outbox(store);
      await fresh.sql('CREATE TABLE notes (id int PRIMARY KEY, body text, bytes blob)');
      db = mysql2Drizzle({ client: fresh.pool });
      outboxRows = mysqlTestControls(fresh.sql).rowCount;
    });
    afterAll(() => fresh.cleanup());
    const noteIds = async () => (await db.select({ id: notes.id }).from(notes).orderBy(notes.id)).map((row) => row.id);

    it('runs ? placeholders with scalar and binary parameters on the transaction itself, committed with it', async () => {
      await db.transaction(async (tx) => {
        const onTx = fromDrizzle(tx);
        expect(onTx.dialect).toBe('mysql');
        const written = await onTx.query('INSERT INTO notes (id, body, bytes) VALUES (?, ?, ?)', [1, 'a ? in text', new Uint8Array([0, 255])]);
        expect(written).toEqual({ rows: [], affectedRows: 1 });
        const read = await onTx.query('SELECT body, bytes, ? AS big, ? AS yes, @@in_transaction AS in_transaction FROM notes WHERE id = ?', [
          12_345_678_901n,
          true,
          1,
        ]);
        expect(read.rows).toEqual([{ body: 'a ? in text', bytes: Buffer.from([0, 255]), big: '12345678901', yes: 1, in_transaction: '1' }]);
        expect(await noteIds()).toEqual([]);
      });
      expect(await noteIds()).toEqual([1]);
    });

    it('vouches for nothing (each write carries its own proof): an enqueue after a raw COMMIT, or on a transaction that ended, is refused', async () => {
      let kept: OutboxTransaction | undefined;
      await db.transaction(async (tx) => {
        kept = fromDrizzle(tx);
        expect(kept.status).toBeUndefined();
      });
      await expect(outbox.enqueue(defined(kept), message(2))).rejects.toThrow(refusedAsNotInTransaction);
      await db.transaction(async (tx) => {
        await tx.execute(sql`commit`);
        await expect(outbox.enqueue(fromDrizzle(tx), message(1))).rejects.toThrow(refusedAsNotInTransaction);
      });
      expect(await outboxRows()).toBe(0);
    });
  });

  describe('on SQLite (better-sqlite3), through betterSqliteTransaction', () => {
    const notes = sqliteTable('notes', { id: sqliteInteger('id').primaryKey(), body: sqliteText('body') });
    let file: FreshSqliteFile;
    let db: BetterSQLite3Database;
    let outbox: Outbox<unknown, SqliteOutboxStore>;
    let outboxRows: () => Promise<number>;
    let noteIds: () => Promise<number[]>;
    beforeAll(async () => {
      file = freshSqliteFile('drizzle');
      const store = new SqliteOutboxStore(file.database());
      await store.migrate();
      outbox = new Outbox(store);
      const plain = file.database();
      await plain.write(() => void plain.run('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, bytes BLOB, flag INTEGER)'));
      db = betterSqliteDrizzle({ client: file.connect() });
      outboxRows = sqliteTestControls(plain).rowCount;
      noteIds = () => plain.read(() => plain.all('SELECT id FROM notes ORDER BY id').map((row) => Number(row.id)));
    });
    afterAll(() => file.cleanup());

    it('runs ? placeholders with booleans, bigints and bytes on the transaction itself, rolled back with it', async () => {
      const rolledBack = betterSqliteTransaction(db, async (tx) => {
        const onTx = fromDrizzle(tx);
        expect(onTx.dialect).toBe('sqlite');
        const written = await onTx.query('INSERT INTO notes (id, body, bytes, flag) VALUES (?, ?, ?, ?)', [2n, 'x', new Uint8Array([0, 255]), true]);
        expect(written).toEqual({ rows: [], affectedRows: 1 });
        const read = await onTx.query('SELECT id, body, bytes, flag FROM notes', []);
        expect(read).toEqual({ rows: [{ id: 2, body: 'x', bytes: Buffer.from([0, 255]), flag: 1 }], affectedRows: 0 });
        const returning = await onTx.query('UPDATE notes SET flag = ? WHERE id = ? RETURNING id', [false, 2]);
        expect(returning).toEqual({ rows: [{ id: 2 }], affectedRows: 1 });
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      expect(await noteIds()).toEqual([]);
    });

    it('is open while its transaction runs and closed once it ended; a raw COMMIT closes it too', async () => {
      let kept: OutboxTransaction | undefined;
      await betterSqliteTransaction(db, async (tx) => {
        kept = fromDrizzle(tx);
        expect(kept.status?.()).toBe('open');
      });
      expect(defined(kept).status?.()).toBe('closed');
      await expect(defined(kept).query('SELECT 1', [])).rejects.toThrow(/whose transaction already ended/);
      const endedByRawCommit = betterSqliteTransaction(db, async (tx) => {
        tx.run(sql`commit`);
        const ended = fromDrizzle(tx);
        expect(ended.status?.()).toBe('closed');
        await expect(outbox.enqueue(ended, message(1))).rejects.toThrow(refusedAsNotInTransaction);
      });
      await expect(endedByRawCommit).rejects.toThrow(/no transaction is active/);
      expect(await outboxRows()).toBe(0);
    });

    it('nests savepoints: an inner rollback undoes only the inner work, and an ended savepoint cannot be nested in', async () => {
      let endedSavepoint: DrizzleBetterSqliteTransaction | undefined;
      await betterSqliteTransaction(db, async (tx) => {
        await tx.insert(notes).values({ id: 10 });
        const inner = betterSqliteTransaction(tx, async (savepoint) => {
          await savepoint.insert(notes).values({ id: 11 });
          await outbox.enqueue(fromDrizzle(savepoint), message(11));
          throw new Error('inner only');
        });
        await expect(inner).rejects.toThrow('inner only');
        await betterSqliteTransaction(tx, async (savepoint) => {
          endedSavepoint = savepoint;
          await savepoint.insert(notes).values({ id: 12 });
        });
        expect(fromDrizzle(defined(endedSavepoint)).status?.()).toBe('closed');
        await expect(betterSqliteTransaction(defined(endedSavepoint), async () => undefined)).rejects.toThrow(refusedAsNotInTransaction);
        expect(fromDrizzle(tx).status?.()).toBe('open');
      });
      expect(await noteIds()).toEqual(expect.arrayContaining([10, 12]));
      expect(await noteIds()).not.toContain(11);
      expect(await outboxRows()).toBe(0);
    });

    it('runs transactions on one connection one after another, each whole', async () => {
      const events: string[] = [];
      const run = (name: string, id: number) =>
        betterSqliteTransaction(db, async (tx) => {
          events.push(`${name} begins`);
          await tx.insert(notes).values({ id });
          await new Promise((resolve) => setImmediate(resolve));
          await outbox.enqueue(fromDrizzle(tx), message(id));
          events.push(`${name} ends`);
        });
      await Promise.all([run('a', 40), run('b', 41)]);
      expect(events).toEqual(['a begins', 'a ends', 'b begins', 'b ends']);
      expect(await noteIds()).toEqual(expect.arrayContaining([40, 41]));
      expect(await outboxRows()).toBe(2);
    });

    it('refuses a second transaction on the root database inside one on the same connection (it would wait forever); the outer one commits', async () => {
      await betterSqliteTransaction(db, async (tx) => {
        await expect(betterSqliteTransaction(db, async () => undefined)).rejects.toThrow(
          /inside another betterSqliteTransaction on the same connection.*betterSqliteTransaction\(tx, async \(inner\) => \.\.\.\)/,
        );
        await tx.insert(notes).values({ id: 50 });
      });
      expect(await noteIds()).toContain(50);
    });

    it("begins once another connection's write transaction committed", async () => {
      const other = file.connect();
      other.exec('BEGIN IMMEDIATE');
      other.prepare('INSERT INTO notes (id) VALUES (60)').run();
      const ours = betterSqliteTransaction(db, async (tx) => (await tx.select().from(notes).where(eq(notes.id, 60))).length);
      // the other connection holds the write lock past a few of our BEGIN IMMEDIATE attempts
      await new Promise((resolve) => setTimeout(resolve, 50));
      other.exec('COMMIT');
      expect(await ours).toBe(1);
    });
  });
});
