import knex, { type Knex } from 'knex';
import pg from 'pg';
import { fromKnex } from '../../src/adapters/knex/index.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import type { AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { mysqlTestControls } from '../support/dialects/mariadb/mysql-test-controls.js';
import { postgresTestControls } from '../support/dialects/postgres/postgres-test-controls.js';
import { sqliteTestControls } from '../support/dialects/sqlite/sqlite-test-controls.js';

/** The rig's side of one database: the Knex instance on it, and what the store and the suite need besides. */
export interface KnexDatabase {
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
export async function knexRig(database: KnexDatabase): Promise<AdapterRig> {
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
      await db
        .transaction(async (trx) => {
          rolledBack = trx;
          throw new RolledBack('rolled back on purpose');
        })
        .catch(onlyRolledBack);
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
export class RolledBack extends Error {}

export function onlyRolledBack(error: unknown): void {
  if (!(error instanceof RolledBack)) throw error;
}

export function defined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the mistake was not set up');
  return value;
}

export async function postgresDatabase(): Promise<KnexDatabase & { readonly store: PostgresOutboxStore; readonly schema: string }> {
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

export async function mariadbDatabase(): Promise<KnexDatabase> {
  const fresh = await freshMysqlDatabase('knex');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  const db = knex({ client: 'mysql2', connection: fresh.url, pool: { min: 0, max: 4 } });
  return { db, store, controls: mysqlTestControls(fresh.sql), drop: fresh.cleanup };
}

export async function sqliteDatabase(): Promise<KnexDatabase> {
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

export const knexHarnesses: readonly AdapterHarness[] = [
  { orm: 'Knex', database: 'postgres', setup: async () => knexRig(await postgresDatabase()) },
  { orm: 'Knex', database: 'mariadb', setup: async () => knexRig(await mariadbDatabase()) },
  { orm: 'Knex', database: 'sqlite', setup: async () => knexRig(await sqliteDatabase()) },
];

/** The status once the adapter holds the transaction's connection (a query made sure of it). */
export async function statusAfterConnection(tx: OutboxTransaction): Promise<unknown> {
  await tx.query('SELECT 1', []);
  return tx.status?.();
}

export const knexDatabases: readonly { readonly name: string; readonly open: () => Promise<KnexDatabase> }[] = [
  { name: 'PostgreSQL (pg)', open: postgresDatabase },
  { name: 'MariaDB (mysql2)', open: mariadbDatabase },
  { name: 'SQLite (better-sqlite3)', open: sqliteDatabase },
];
