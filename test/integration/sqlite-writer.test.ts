import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboxerError } from '../../src/core/errors.js';
import type { NewOutboxMessage } from '../../src/core/message.js';
import { Outbox } from '../../src/core/outbox.js';
import { validateMessage } from '../../src/core/validate-message.js';
import { fromBetterSqlite3, openSqliteStore } from '../../src/stores/sqlite/open-sqlite.js';
import { sqliteMigrations } from '../../src/stores/sqlite/migrations.js';
import { SqliteOutboxStore, type SqliteStoreOptions } from '../../src/stores/sqlite/sqlite-store.js';
import { freshSqliteFile, type FreshSqliteFile } from '../support/sqlite-file.js';

const msg = (extra: { delayMs?: number; availableAt?: Date } = {}) =>
  validateMessage({ topic: 'orders', type: 'order.created', payload: { n: 1 }, ...extra }, { maxPayloadBytes: 1024 });

async function codeOf(action: () => unknown): Promise<string | undefined> {
  try {
    await action();
  } catch (error) {
    if (error instanceof OutboxerError) return error.code;
    throw error;
  }
  return undefined;
}

describe("SQLite writer on the caller's own better-sqlite3 connection", () => {
  let file: FreshSqliteFile | undefined;
  afterEach(async () => {
    await file?.cleanup();
    file = undefined;
  });

  const migrated = async (options: SqliteStoreOptions = {}) => {
    file = freshSqliteFile('writer');
    const store = new SqliteOutboxStore(file.database(), options);
    await store.migrate();
    const db = file.connect();
    db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY)');
    const count = (sql: string) => Number((db.prepare(sql).get() as { n: number }).n);
    return { store, db, count, outbox: new Outbox(store) };
  };

  it('stores the messages when the caller commits and nothing when it rolls back, with its own rows', async () => {
    const { store, db, count, outbox } = await migrated();
    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT INTO orders (id) VALUES (1)').run();
    await outbox.enqueue(db, { topic: 'orders', type: 'order.created', payload: { id: 1 } });
    db.exec('ROLLBACK');
    expect(count('SELECT count(*) AS n FROM outbox')).toBe(0);
    expect(count('SELECT count(*) AS n FROM orders')).toBe(0);

    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT INTO orders (id) VALUES (2)').run();
    const id = await outbox.enqueue(db, { topic: 'orders', type: 'order.created', payload: { id: 2 } });
    expect(db.inTransaction).toBe(true); // the store never commits for the caller
    db.exec('COMMIT');
    expect(db.prepare('SELECT id, payload FROM outbox').all()).toEqual([{ id, payload: '{"id":2}' }]);
    expect(await store.stats()).toMatchObject({ pending: 1 });
  });

  it("runs the caller's transaction through fromBetterSqlite3(db) as a runner of outbox.transaction", async () => {
    const { db, count, outbox } = await migrated();
    const runner = fromBetterSqlite3(db);
    await expect(
      outbox.transaction(runner, async (tx) => {
        tx.prepare('INSERT INTO orders (id) VALUES (3)').run();
        await outbox.enqueue(tx, { topic: 'orders', type: 'x', payload: 3 });
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    expect(count('SELECT count(*) AS n FROM outbox') + count('SELECT count(*) AS n FROM orders')).toBe(0);
    await outbox.transaction(runner, async (tx) => void (await outbox.enqueue(tx, { topic: 'orders', type: 'x', payload: 4 })));
    expect(count('SELECT count(*) AS n FROM outbox')).toBe(1);
  });

  it('refuses a connection outside a transaction, storing nothing', async () => {
    const { store, db, count, outbox } = await migrated();
    expect(await codeOf(() => store.insert(db, [msg()]))).toBe('OUTBOXER_NOT_IN_TRANSACTION');
    expect(await codeOf(() => outbox.enqueue(db, { topic: 'orders', type: 'x', payload: 1 }))).toBe('OUTBOXER_NOT_IN_TRANSACTION');
    expect(count('SELECT count(*) AS n FROM outbox')).toBe(0);
  });

  it("inserts a batch all or nothing, leaving the caller's transaction open with its own writes", async () => {
    const { store, db, count } = await migrated();
    const broken: NewOutboxMessage = { ...msg(), topic: '' }; // past validation: only the table refuses it
    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT INTO orders (id) VALUES (5)').run();
    await expect(store.insert(db, [msg(), broken])).rejects.toThrow(/outbox topic is invalid/);
    expect(db.inTransaction).toBe(true);
    db.exec('COMMIT');
    expect(count('SELECT count(*) AS n FROM orders')).toBe(1);
    expect(count('SELECT count(*) AS n FROM outbox')).toBe(0);
  });

  it('schedules delays on the database clock and availableAt as given', async () => {
    const { store, db } = await migrated();
    const at = new Date(Date.now() + 7_200_000);
    db.exec('BEGIN IMMEDIATE');
    await store.insert(db, [msg({ delayMs: 3_600_000 }), msg({ availableAt: at }), msg()]);
    db.exec('COMMIT');
    const rows = db.prepare('SELECT due_at - created_at AS delay, due_at FROM outbox ORDER BY seq').all() as { delay: number | null; due_at: number | null }[];
    expect(rows[0]?.delay).toBeGreaterThanOrEqual(3_600_000);
    expect(rows[0]?.delay).toBeLessThan(3_600_000 + 5_000);
    expect(rows[1]?.due_at).toBe(at.getTime());
    expect(rows[2]?.due_at).toBeNull();
    expect(await store.stats()).toMatchObject({ pending: 1, scheduled: 2 });
  });

  it('refuses bad options with OUTBOXER_INVALID_OPTION, naming the option', async () => {
    file = freshSqliteFile('writer');
    const database = file.database();
    const bad: Record<string, unknown>[] = [
      { partitionCount: 0 },
      { partitionCount: 1025 },
      { partitionCount: 1.5 },
      { retainPublishedMs: -1 },
      { idempotencyWindowMs: 0 },
      { schema: 'main' },
    ];
    for (const options of bad) {
      expect(() => new SqliteOutboxStore(database, options as SqliteStoreOptions)).toThrow(
        expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION', options: [Object.keys(options)[0]] }),
      );
    }
  });

  it('applies the schema once when two connections migrate the same file at once', async () => {
    file = freshSqliteFile('writer');
    const one = new SqliteOutboxStore(file.database(), { partitionCount: 8 });
    const two = new SqliteOutboxStore(file.database(), { partitionCount: 8 });
    await Promise.all([one.migrate(), two.migrate(), one.migrate()]);
    const db = file.connect();
    expect(db.prepare('SELECT table_name, version FROM outboxer_migrations ORDER BY version').all()).toEqual(
      sqliteMigrations.map((m) => ({ table_name: 'outbox', version: m.version })),
    );
    expect(db.prepare('SELECT count(*) AS n FROM outbox_partitions').get()).toEqual({ n: 8 });
    await two.verify();
  });

  it('says an unmigrated file is not migrated, and passes once it is', async () => {
    file = freshSqliteFile('writer');
    const store = new SqliteOutboxStore(file.database());
    expect(await codeOf(() => store.verify())).toBe('OUTBOXER_NOT_MIGRATED');
    await store.migrate();
    await store.verify();
    expect(store.migrationSql()).toContain('CREATE TABLE IF NOT EXISTS "outbox"');
  });

  it('says a file it may only read is read-only for this process, before a relay would fail at its first write', async () => {
    file = freshSqliteFile('writer');
    await new SqliteOutboxStore(file.database()).migrate();
    const readOnly = new Database(file.path, { readonly: true });
    const store = new SqliteOutboxStore(fromBetterSqlite3(readOnly, { ownsHandle: true }));
    try {
      expect(await codeOf(() => store.verify())).toBe('OUTBOXER_PERMISSION_DENIED');
    } finally {
      await store.close();
    }
  });
});

describe('openSqliteStore', () => {
  it('opens a file, owns its connection, and closes it', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'outboxer-open-'));
    try {
      const store = await openSqliteStore(join(directory, 'app.db'), { partitionCount: 4 });
      await store.migrate();
      const outbox = new Outbox(store);
      await outbox.transaction(store.database, async (tx) => void (await outbox.enqueue(tx, { topic: 't', type: 'x', payload: 1 })));
      expect(await store.stats()).toMatchObject({ pending: 1 });
      expect((await store.relayGroup()).partitionCount).toBe(4);
      await store.close();
      expect(store.database.handle.open).toBe(false);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('names the missing directory of a path that cannot be created', async () => {
    const missing = join(tmpdir(), `outboxer-nowhere-${process.pid}-${Date.now()}`, 'app.db');
    const error: unknown = await openSqliteStore(missing).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutboxerError);
    expect((error as OutboxerError).code).toBe('OUTBOXER_DATABASE_NOT_FOUND');
    expect((error as OutboxerError).message).toContain('does not exist; create it first');
  });
});
