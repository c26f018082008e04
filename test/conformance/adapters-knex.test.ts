import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/adapters/knex/index.js';
import { ConfigurationError, OutboxerError } from '../../src/core/errors.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import type { AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { expectNothingCommittedAlone, expectVouchedOnlyWhereOpen, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { mysqlTestControls } from './mysql-test-controls.js';
import { postgresTestControls } from './postgres-test-controls.js';
import { sqliteTestControls } from './sqlite-test-controls.js';

/** The rig's side of one database: the Knex instance on it, and what the store and the suite need besides. */
interface KnexDatabase {
  readonly db: Knex;
  readonly store: AdapterRig['store'];
  readonly controls: AdapterRig['controls'];
  /** Drops what the rig made (schema, database, file) after the Knex pool ended. */
  drop(): Promise<void>;
}

/** Which Knex transaction each context the suite holds came from, for nesting in it. */
const transactionOfContext = new WeakMap<OrmTransactionContext, Knex.Transaction>();

function contextOf(trx: Knex.Transaction): OrmTransactionContext {
  const context: OrmTransactionContext = {
    tx: fromKnex(trx),
    insertOrder: async (id) => {
      await trx('orders').insert({ id, note: `order ${id}` });
    },
  };
  transactionOfContext.set(context, trx);
  return context;
}

/** The rig over one Knex database: every AdapterRig member in Knex's own API. */
async function knexRig(database: KnexDatabase): Promise<AdapterRig> {
  const { db } = database;
  await db.schema.createTable('orders', (table) => {
    table.integer('id').primary();
    table.text('note').notNullable();
  });
  /** Transactions the rig began and left to Knex's bookkeeping: cleanup rolls them back. */
  const opened: Knex.Transaction[] = [];
  return {
    store: database.store,
    controls: database.controls,
    transaction: (work) => db.transaction((trx) => work(contextOf(trx))),
    nested: (context, inner) => {
      const outer = transactionOfContext.get(context);
      if (outer === undefined) throw new Error('nested() got a context this rig did not make');
      return outer.transaction((savepoint) => inner(contextOf(savepoint)));
    },
    async mistakes() {
      let adapterKeptAfterCommit: OutboxTransaction | undefined;
      let committed: Knex.Transaction | undefined;
      await db.transaction(async (trx) => {
        committed = trx;
        adapterKeptAfterCommit = fromKnex(trx);
      });
      let rolledBack: Knex.Transaction | undefined;
      await db.transaction(async (trx) => {
        rolledBack = trx;
        throw new RolledBack('rolled back on purpose');
      }).catch(onlyRolledBack);
      let releasedSavepoint: OutboxTransaction | undefined;
      await db.transaction(async (outer) => {
        await outer.transaction(async (savepoint) => {
          releasedSavepoint = fromKnex(savepoint);
        });
      });
      // Knex still counts this one open, but the connection is not inside a transaction: only the driver or the database can tell
      const endedByRawCommit = await db.transaction();
      opened.push(endedByRawCommit);
      await endedByRawCommit.raw('COMMIT');
      const endedByRawCommitAdapter = fromKnex(endedByRawCommit);
      return [
        { name: 'the root knex instance', handle: () => fromKnex(db as never) },
        { name: 'a transaction kept after it committed', handle: () => fromKnex(defined(committed)) },
        { name: 'an adapter made inside a transaction, used after it committed', handle: () => defined(adapterKeptAfterCommit) },
        { name: 'a transaction kept after it rolled back', handle: () => fromKnex(defined(rolledBack)) },
        { name: 'an adapter over a savepoint, used after its outer transaction committed', handle: () => defined(releasedSavepoint) },
        { name: 'a transaction Knex thinks open, ended by a raw COMMIT', handle: () => endedByRawCommitAdapter },
      ];
    },
    runThroughOutbox: (outboxTransaction, work) => outboxTransaction(() => db.transaction((trx) => work(contextOf(trx)))),
    async orderExists(id) {
      const row: unknown = await db('orders').where({ id }).first();
      return row !== undefined;
    },
    async cleanup() {
      for (const trx of opened) if (!trx.isCompleted()) await trx.rollback().catch(() => undefined);
      await db.destroy();
      await database.drop();
    },
  };
}

/** Thrown to roll a transaction back on purpose; anything else (a failed assertion) still fails the test. */
class RolledBack extends Error {}

function onlyRolledBack(error: unknown): void {
  if (!(error instanceof RolledBack)) throw error;
}

function defined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the mistake was not set up');
  return value;
}

async function postgresDatabase(): Promise<KnexDatabase & { readonly store: PostgresOutboxStore; readonly schema: string }> {
  const schema = uniqueName('knex');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  pool.on('error', () => undefined);
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
  await store.migrate();
  const db = knex({ client: 'pg', connection: services.postgresUrl, searchPath: [schema], pool: { min: 0, max: 4 } });
  const sql = async (text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as Record<string, unknown>[];
  return {
    db,
    store,
    schema,
    controls: postgresTestControls(sql, schema),
    async drop() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

async function mariadbDatabase(): Promise<KnexDatabase> {
  const fresh = await freshMysqlDatabase('knex');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  const db = knex({ client: 'mysql2', connection: fresh.url, pool: { min: 0, max: 4 } });
  return { db, store, controls: mysqlTestControls(fresh.sql), drop: fresh.cleanup };
}

async function sqliteDatabase(): Promise<KnexDatabase> {
  const file = freshSqliteFile('knex');
  const plain = file.database();
  const store = new SqliteOutboxStore(file.database());
  await store.migrate();
  const db = knex({
    client: 'better-sqlite3',
    connection: { filename: file.path },
    useNullAsDefault: true,
    // one more connection than Knex's default for SQLite: a mistake of the rig holds one open until cleanup
    pool: { min: 1, max: 2 },
  });
  return { db, store, controls: sqliteTestControls(plain), drop: () => file.cleanup() };
}

const knexHarnesses: readonly AdapterHarness[] = [
  { orm: 'Knex', database: 'postgres', setup: async () => knexRig(await postgresDatabase()) },
  { orm: 'Knex', database: 'mariadb', setup: async () => knexRig(await mariadbDatabase()) },
  { orm: 'Knex', database: 'sqlite', setup: async () => knexRig(await sqliteDatabase()) },
];
for (const harness of knexHarnesses) describeAdapterConformance(harness);

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
      expect(refuse).toThrow(/the root knex instance, which runs each statement outside any transaction\. Pass the trx.*knex\.transaction\(async \(trx\) => \{ await outbox\.enqueue\(fromKnex\(trx\), message\); \}\)/);
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
          expect(refuse).toThrow("fromKnex supports the Knex clients 'pg' (PostgreSQL), 'mysql2' (MariaDB/MySQL) and 'better-sqlite3' (SQLite); this transaction's client is 'sqlite3'");
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
        const arrays = await tx.query('SELECT id, n FROM unnest($1::text[], $2::int[]) AS t(id, n) ORDER BY n', [['a', 'b', null], [1, 2, 3]]);
        expect(arrays.rows).toEqual([{ id: 'a', n: 1 }, { id: 'b', n: 2 }, { id: null, n: 3 }]);
        const question = await tx.query(`SELECT '{"a": 1}'::jsonb ? $1 AS has_key, $2::bigint AS big, $3::boolean AS yes, $4::bytea AS bytes`, ['a', 2n ** 62n, true, new Uint8Array([0, 255])]);
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
      await database.db.transaction(async (trx) => {
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
      }).catch(onlyRolledBack);
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
      await database.db.transaction(async (trx) => {
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
      }).catch(onlyRolledBack);
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
        const read = await tx.query('SELECT body, bytes, ? AS big, ? AS yes, @@in_transaction AS in_transaction FROM notes WHERE id = ?', [12_345_678_901n, true, 1]);
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

/** The status once the adapter holds the transaction's connection (a query made sure of it). */
async function statusAfterConnection(tx: OutboxTransaction): Promise<unknown> {
  await tx.query('SELECT 1', []);
  return tx.status?.();
}

const knexDatabases: readonly { readonly name: string; readonly open: () => Promise<KnexDatabase> }[] = [
  { name: 'PostgreSQL (pg)', open: postgresDatabase },
  { name: 'MariaDB (mysql2)', open: mariadbDatabase },
  { name: 'SQLite (better-sqlite3)', open: sqliteDatabase },
];

for (const { name, open } of knexDatabases) {
  describe(`fromKnex on ${name}: an enqueue not awaited, then the transaction rolls back`, () => {
    let database: KnexDatabase | undefined;
    afterEach(async () => {
      await database?.db.destroy();
      await database?.drop();
      database = undefined;
    });
    const floatingRig = async (rollBack: (trx: Knex.Transaction) => Promise<void>): Promise<FloatingEnqueueRig> => {
      const { db, store, controls } = (database = await open());
      return {
        outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
        rowCount: () => controls.rowCount(),
        rollBackAfter: (turns, enqueue) =>
          db
            .transaction(async (trx) => {
              enqueue(fromKnex(trx));
              await microtaskTurns(turns);
              await rollBack(trx);
            })
            .then(
              () => expect.fail('the transaction was to roll back'),
              () => undefined,
            ),
        commit: (work) => db.transaction((trx) => work(fromKnex(trx))),
      };
    };
    const throwFromCallback = () => Promise.reject(new RolledBack('roll back'));
    // Knex still counts the transaction open: only the driver knows it ended
    const rawRollback = async (trx: Knex.Transaction) => {
      await trx.raw('ROLLBACK');
      throw new RolledBack('and let Knex end it too');
    };

    it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {

      await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));

    });


    for (const idempotent of [false, true]) {
      const keyed = idempotent ? ' (with an idempotency key)' : '';
      it(`commits nothing when the callback throws right after it${keyed}`, async () => {
        await expectNothingCommittedAlone(await floatingRig(throwFromCallback), { idempotent });
      });
      it(`commits nothing when a ROLLBACK through trx.raw ends the transaction behind Knex${keyed}`, async () => {
        await expectNothingCommittedAlone(await floatingRig(rawRollback), { idempotent });
      });
    }
  });
}
