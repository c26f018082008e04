import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/adapters/knex/index.js';
import { ConfigurationError, OutboxerError } from '../../src/core/errors.js';
import { Outbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import type { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { services, uniqueName } from '../support/services.js';
import {
  defined,
  mariadbDatabase,
  onlyRolledBack,
  postgresDatabase,
  RolledBack,
  sqliteDatabase,
  statusAfterConnection,
  type KnexDatabase,
} from './knex-adapter-rigs.js';

/** What only Knex's adapter does: its type-level refusal, where statements go, and the driver's word on status. */
describe('fromKnex', () => {
  describe('refusals', () => {
    let db: Knex;
    let directory: string;
    beforeAll(() => {
      directory = mkdtempSync(join(tmpdir(), 'outboxer-knex-'));
      db = knex({ client: 'better-sqlite3', connection: { filename: join(directory, 'app.db') }, useNullAsDefault: true });
    });
    afterAll(async () => {
      await db.destroy();
      rmSync(directory, { recursive: true, force: true });
    });

    it('refuses the root knex instance at compile time and at once at run time, naming the fix', () => {
      // @ts-expect-error the root instance is no Knex.Transaction: it runs each statement on its own
      const refuse = () => fromKnex(db);
      expect(refuse).toThrow(OutboxerError);
      expect(refuse).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
      expect(refuse).toThrow(
        /the root knex instance, which runs each statement outside any transaction\. Pass the trx.*knex\.transaction\(async \(trx\) => \{ await outbox\.enqueue\(fromKnex\(trx\), message\); \}\)/,
      );
    });

    it('refuses a query builder or a plain object, which are no transaction either', () => {
      // @ts-expect-error a query builder is no Knex.Transaction
      expect(() => fromKnex(db('orders'))).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
      expect(() => fromKnex({} as never)).toThrow(/not a Knex transaction/);
      expect(() => fromKnex(null as never)).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
    });

    it('takes a Knex.Transaction of any record and result types', async () => {
      await db.transaction(async (trx: Knex.Transaction<{ id: number }, { id: number }[]>) => {
        expect(fromKnex(trx).dialect).toBe('sqlite');
      });
    });

    it('refuses a transaction that already completed, at once', async () => {
      const trx = await db.transaction();
      await trx.commit();
      expect(() => fromKnex(trx)).toThrow(/has already ended/);
    });

    it('refuses a Knex client whose connection it does not reach, naming the ones it does', async () => {
      const sqlite3 = knex({ client: 'sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true });
      try {
        await sqlite3.transaction(async (trx) => {
          const refuse = () => fromKnex(trx);
          expect(refuse).toThrow(ConfigurationError);
          expect(refuse).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION' }));
          expect(refuse).toThrow(
            "fromKnex supports the Knex clients 'pg' (PostgreSQL), 'mysql2' (MariaDB/MySQL) and 'better-sqlite3' (SQLite); this transaction's client is 'sqlite3'",
          );
        });
      } finally {
        await sqlite3.destroy();
      }
    });
  });

  describe('on PostgreSQL (pg)', () => {
    let database: KnexDatabase & { readonly store: PostgresOutboxStore; readonly schema: string };
    beforeAll(async () => {
      database = await postgresDatabase();
      await database.db.schema.createTable('notes', (table) => {
        table.integer('id').primary();
        table.text('body');
      });
    });
    afterAll(async () => {
      await database.db.destroy();
      await database.drop();
    });

    it('passes $n placeholders, a ? operator and PostgreSQL array parameters to the driver untouched', async () => {
      await database.db.transaction(async (trx) => {
        const tx = fromKnex(trx);
        expect(tx.dialect).toBe('postgres');
        const arrays = await tx.query('SELECT id, n FROM unnest($1::text[], $2::int[]) AS t(id, n) ORDER BY n', [
          ['a', 'b', null],
          [1, 2, 3],
        ]);
        expect(arrays.rows).toEqual([
          { id: 'a', n: 1 },
          { id: 'b', n: 2 },
          { id: null, n: 3 },
        ]);
        const question = await tx.query(`SELECT '{"a": 1}'::jsonb ? $1 AS has_key, $2::bigint AS big, $3::boolean AS yes, $4::bytea AS bytes`, [
          'a',
          2n ** 62n,
          true,
          new Uint8Array([0, 255]),
        ]);
        expect(question.rows).toEqual([{ has_key: true, big: (2n ** 62n).toString(), yes: true, bytes: Buffer.from([0, 255]) }]);
      });
    });

    it('runs on the transaction itself: its rows commit and roll back with it, and affectedRows counts them', async () => {
      await database.db.transaction(async (trx) => {
        const written = await fromKnex(trx).query('INSERT INTO notes (id, body) VALUES ($1, $2), ($3, $4)', [1, 'kept', 2, 'kept']);
        expect(written).toEqual({ rows: [], affectedRows: 2 });
        expect(await trx('notes').count({ count: '*' })).toEqual([{ count: '2' }]);
        expect(await database.db('notes').count({ count: '*' })).toEqual([{ count: '0' }]);
      });
      await database.db
        .transaction(async (trx) => {
          await fromKnex(trx).query('INSERT INTO notes (id, body) VALUES ($1, $2)', [3, 'gone']);
          throw new RolledBack('roll back');
        })
        .catch(onlyRolledBack);
      expect(await database.db('notes').orderBy('id').pluck('id')).toEqual([1, 2]);
    });

    it('prepares a named statement on the transaction connection', async () => {
      await database.db.transaction(async (trx) => {
        const tx = fromKnex(trx);
        const name = uniqueName('outboxer_knex');
        await tx.query('SELECT $1::int + 1 AS next', [1], { name });
        const prepared = await tx.query('SELECT statement FROM pg_prepared_statements WHERE name = $1', [name]);
        expect(prepared.rows).toEqual([{ statement: 'SELECT $1::int + 1 AS next' }]);
        expect((await tx.query('SELECT $1::int + 1 AS next', [41], { name })).rows).toEqual([{ next: 42 }]);
      });
    });

    it("lets the store's named statements be prepared on the transaction connection", async () => {
      const outbox = new Outbox(database.store);
      await database.db.transaction(async (trx) => {
        await outbox.enqueue(fromKnex(trx), { topic: 'notes.added', type: 'note.added', key: 'note-1', payload: { id: 1 } });
        const prepared = await fromKnex(trx).query("SELECT count(*)::int AS count FROM pg_prepared_statements WHERE name LIKE 'outboxer\\_%'", []);
        expect(prepared.rows[0]?.count).toBeGreaterThan(0);
      });
    });

    it("has the store's refusal name Knex's fix, for a transaction ended behind Knex's back", async () => {
      const outbox = new Outbox(database.store);
      const trx = await database.db.transaction();
      try {
        await trx.raw('COMMIT');
        await expect(outbox.enqueue(fromKnex(trx), { topic: 'notes.added', type: 'note.added', payload: { id: 2 } })).rejects.toThrow(
          /^enqueue was given a Knex transaction .*nothing was written\. Pass the trx Knex gives you, inside its transaction: await knex\.transaction\(async \(trx\) => \{ await outbox\.enqueue\(fromKnex\(trx\), message\); \}\)$/,
        );
      } finally {
        await trx.rollback();
      }
    });

    it("reports node-postgres' transaction status: open, failed after an error, closed once committed", async () => {
      let kept: OutboxTransaction | undefined;
      await database.db
        .transaction(async (trx) => {
          kept = fromKnex(trx);
          await kept.query('SELECT 1', []);
          expect(await kept.status?.()).toBe('open');
          // pg rejects at the ErrorResponse; the status ('E') comes with the ReadyForQuery after it
          const client = (await (trx.client as { acquireConnection(): Promise<unknown> }).acquireConnection()) as {
            readonly connection: { once(event: 'readyForQuery', listener: () => void): unknown };
          };
          const statusArrived = new Promise<void>((resolve) => client.connection.once('readyForQuery', resolve));
          await expect(kept.query('SELECT 1 / 0', [])).rejects.toThrow(/division by zero/);
          await statusArrived;
          expect(await kept.status?.()).toBe('failed');
          throw new RolledBack('end the failed transaction');
        })
        .catch(onlyRolledBack);
      expect(await defined(kept).status?.()).toBe('closed');
    });

    it('answers status with a promise only until Knex handed over the connection, then at once', async () => {
      await database.db.transaction(async (trx) => {
        const tx = fromKnex(trx);
        const first = tx.status?.();
        expect(first).toBeInstanceOf(Promise);
        expect(await first).toBe('open');
        expect(tx.status?.()).toBe('open');
      });
    });

    it('reports closed when a raw COMMIT ended the transaction behind Knex', async () => {
      const trx = await database.db.transaction();
      try {
        const tx = fromKnex(trx);
        await trx.raw('COMMIT');
        expect(trx.isCompleted()).toBe(false);
        expect(await statusAfterConnection(tx)).toBe('closed');
      } finally {
        await trx.rollback();
      }
    });

    it('nests as Knex does (a savepoint), and refuses the savepoint once released, writing nothing', async () => {
      await database.db
        .transaction(async (trx) => {
          let savepoint: OutboxTransaction | undefined;
          await trx.transaction(async (inner) => {
            savepoint = fromKnex(inner);
            await savepoint.query('INSERT INTO notes (id, body) VALUES ($1, $2)', [10, 'in savepoint']);
            expect(await savepoint.status?.()).toBe('open');
          });
          expect(await defined(savepoint).status?.()).toBe('closed');
          await expect(defined(savepoint).query('INSERT INTO notes (id, body) VALUES ($1, $2)', [11, 'late'])).rejects.toThrow(
            expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }),
          );
          expect(await trx('notes').whereIn('id', [10, 11]).pluck('id')).toEqual([10]);
          throw new RolledBack('roll back the outer transaction');
        })
        .catch(onlyRolledBack);
      expect(await database.db('notes').whereIn('id', [10, 11]).pluck('id')).toEqual([]);
    });

    it('refuses a query once the transaction committed, when its connection already serves the next transaction', async () => {
      const oneConnection = knex({ client: 'pg', connection: services.postgresUrl, searchPath: [database.schema], pool: { min: 0, max: 1 } });
      try {
        let kept: OutboxTransaction | undefined;
        await oneConnection.transaction(async (trx) => {
          kept = fromKnex(trx);
          await kept.query('SELECT 1', []);
        });
        await oneConnection.transaction(async (other) => {
          await other('notes').insert({ id: 20, body: 'other' });
          await expect(defined(kept).query('INSERT INTO notes (id, body) VALUES ($1, $2)', [21, 'late'])).rejects.toThrow(
            /fromKnex got a Knex transaction that has already ended \(committed, rolled back, or its savepoint released\)\. Pass the trx Knex gives you/,
          );
        });
        expect(await database.db('notes').whereIn('id', [20, 21]).pluck('id')).toEqual([20]);
      } finally {
        await oneConnection.destroy();
      }
    });
  });

  describe('on MariaDB (mysql2)', () => {
    let database: KnexDatabase;
    beforeAll(async () => {
      database = await mariadbDatabase();
      await database.db.schema.createTable('notes', (table) => {
        table.integer('id').primary();
        table.text('body');
        table.binary('bytes');
      });
    });
    afterAll(async () => {
      await database.db.destroy();
      await database.drop();
    });

    it('runs ? placeholders with scalar and binary parameters on the transaction itself', async () => {
      await database.db.transaction(async (trx) => {
        const tx = fromKnex(trx);
        expect(tx.dialect).toBe('mysql');
        const written = await tx.query('INSERT INTO notes (id, body, bytes) VALUES (?, ?, ?)', [1, 'a ? in text', new Uint8Array([0, 255])]);
        expect(written).toEqual({ rows: [], affectedRows: 1 });
        const read = await tx.query('SELECT body, bytes, ? AS big, ? AS yes, @@in_transaction AS in_transaction FROM notes WHERE id = ?', [
          12_345_678_901n,
          true,
          1,
        ]);
        expect(read.rows).toEqual([{ body: 'a ? in text', bytes: Buffer.from([0, 255]), big: 12_345_678_901, yes: 1, in_transaction: 1 }]);
        expect(await database.db('notes').pluck('id')).toEqual([]);
      });
      expect(await database.db('notes').pluck('id')).toEqual([1]);
    });

    it('leaves the status to the database while Knex counts the transaction open, and reports closed after', async () => {
      let kept: OutboxTransaction | undefined;
      await database.db.transaction(async (trx) => {
        kept = fromKnex(trx);
        await kept.query('SELECT 1', []);
        expect(await kept.status?.()).toBeUndefined();
      });
      expect(await defined(kept).status?.()).toBe('closed');
      await expect(defined(kept).query('SELECT 1', [])).rejects.toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
    });
  });

  describe('on SQLite (better-sqlite3)', () => {
    let database: KnexDatabase;
    beforeAll(async () => {
      database = await sqliteDatabase();
      await database.db.schema.createTable('notes', (table) => {
        table.integer('id').primary();
        table.text('body');
        table.binary('bytes');
        table.boolean('flag');
      });
    });
    afterAll(async () => {
      await database.db.destroy();
      await database.drop();
    });

    it('runs ? placeholders with booleans, bigints and bytes on the transaction itself, rolled back with it', async () => {
      await database.db
        .transaction(async (trx) => {
          const tx = fromKnex(trx);
          expect(tx.dialect).toBe('sqlite');
          const written = await tx.query('INSERT INTO notes (id, body, bytes, flag) VALUES (?, ?, ?, ?)', [2n, 'x', new Uint8Array([0, 255]), true]);
          expect(written).toEqual({ rows: [], affectedRows: 1 });
          const read = await tx.query('SELECT id, body, bytes, flag FROM notes', []);
          expect(read).toEqual({ rows: [{ id: 2, body: 'x', bytes: Buffer.from([0, 255]), flag: 1 }], affectedRows: 1 });
          throw new RolledBack('roll back');
        })
        .catch(onlyRolledBack);
      expect(await database.db('notes').pluck('id')).toEqual([]);
    });

    it("reports better-sqlite3's inTransaction: open inside, closed after a raw COMMIT and after Knex's own", async () => {
      const trx = await database.db.transaction();
      const tx = fromKnex(trx);
      expect(await statusAfterConnection(tx)).toBe('open');
      await trx.raw('COMMIT');
      expect(await tx.status?.()).toBe('closed');
      await trx.rollback(); // lets Knex release the connection (SQLite says no transaction is active; Knex resolves)
      await database.db.transaction(async (again) => {
        const next = fromKnex(again);
        await next.query('SELECT 1', []);
        expect(await next.status?.()).toBe('open');
        await again.commit();
        expect(await next.status?.()).toBe('closed');
      });
    });
  });
});
