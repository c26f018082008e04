import { EntitySchema, MikroORM, type EntityManager, type Options } from '@mikro-orm/core';
import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { MySqlDriver } from '@mikro-orm/mysql';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { fromMikroOrm } from '../../src/adapters/mikro-orm/index.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import type { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { services } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import type { AdapterDatabase, AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { mysqlTestControls } from '../support/dialects/mariadb/mysql-test-controls.js';
import { postgresTestControls } from '../support/dialects/postgres/postgres-test-controls.js';
import { sqliteTestControls } from '../support/dialects/sqlite/sqlite-test-controls.js';

export interface Order {
  id: number;
  note: string;
}

/** The business row, mapped without decorators. */
export const Order = new EntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  properties: { id: { type: 'integer', primary: true, autoincrement: false }, note: { type: 'string' } },
});

const ordersDdl = (table: string) => `CREATE TABLE ${table} (id INTEGER PRIMARY KEY, note TEXT NOT NULL)`;

export class Rollback extends Error {}

/** A rollback that hands back the EntityManager of the transaction it ended. */
class RolledBack extends Error {
  constructor(readonly em: EntityManager) {
    super('rolled back on purpose');
  }
}

/** One database under MikroORM beside the outbox store, and plain SQL outside any transaction. */
export interface MikroOrmDatabase<Store extends AdapterRig['store'] = AdapterRig['store']> {
  readonly orm: MikroORM;
  readonly store: Store;
  readonly controls: AdapterRig['controls'];
  /** Plain SQL outside any transaction, in the database's own placeholders. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  /** The `?` or `$1` of the first parameter. */
  readonly placeholder: string;
  /** The business table as plain SQL names it (on PostgreSQL, in the test's schema). */
  readonly orders: string;
  cleanup(): Promise<void>;
}

export const ormOptions = { entities: [Order], debug: false, allowGlobalContext: false } satisfies Options;

export async function openPostgres(connections = 4): Promise<MikroOrmDatabase<PostgresOutboxStore> & { readonly schema: string }> {
  const fixture = await createPostgresFixture();
  const sql = async (text: string, params?: unknown[]) => (await fixture.pool.query(text, params)).rows as Record<string, unknown>[];
  const orders = `"${fixture.schema}".orders`;
  await sql(ordersDdl(orders));
  const orm = await MikroORM.init({
    ...ormOptions,
    driver: PostgreSqlDriver,
    clientUrl: services.postgresUrl,
    schema: fixture.schema,
    pool: { min: 0, max: connections },
  });
  return {
    orm,
    schema: fixture.schema,
    store: fixture.store,
    controls: postgresTestControls(sql, fixture.schema),
    sql,
    placeholder: '$1',
    orders,
    async cleanup() {
      await orm.close(true);
      await fixture.cleanup();
    },
  };
}

export async function openMariadb(connections = 4): Promise<MikroOrmDatabase<MysqlOutboxStore>> {
  const fresh = await freshMysqlDatabase('mko');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  await fresh.sql(ordersDdl('orders'));
  const orm = await MikroORM.init({ ...ormOptions, driver: MySqlDriver, clientUrl: fresh.url, pool: { min: 0, max: connections } });
  return {
    orm,
    store,
    controls: mysqlTestControls(fresh.sql),
    sql: fresh.sql,
    placeholder: '?',
    orders: 'orders',
    async cleanup() {
      await orm.close(true);
      await fresh.cleanup();
    },
  };
}

export async function openSqlite(): Promise<MikroOrmDatabase<SqliteOutboxStore>> {
  const file = freshSqliteFile('mko');
  const store = new SqliteOutboxStore(file.database());
  await store.migrate();
  const plain = file.database();
  plain.handle.exec(ordersDdl('orders'));
  const orm = await MikroORM.init({ ...ormOptions, driver: BetterSqliteDriver, dbName: file.path });
  return {
    orm,
    store,
    controls: sqliteTestControls(plain),
    sql: (text, params = []) => plain.read(() => plain.all(text, params)),
    placeholder: '?',
    orders: 'orders',
    async cleanup() {
      await orm.close(true);
      await file.cleanup();
    },
  };
}

/** The databases MikroORM 6 speaks among outboxer's (it has no PGlite driver). */
export type OrmDatabase = Exclude<AdapterDatabase, 'pglite'>;

/** `connections`: the size of MikroORM's pool (on SQLite, Knex's default pool of one connection). */
const OPENERS: Readonly<Record<OrmDatabase, (connections?: number) => Promise<MikroOrmDatabase>>> = {
  postgres: openPostgres,
  mariadb: openMariadb,
  sqlite: openSqlite,
};
export const DATABASES = Object.entries(OPENERS) as [OrmDatabase, (connections?: number) => Promise<MikroOrmDatabase>][];

/** The rig the shared suite drives: MikroORM's own transactions (`orm.em.transactional`), its entities for the business row. */
export function mikroOrmRig(database: MikroOrmDatabase): AdapterRig {
  const { orm } = database;
  const managers = new WeakMap<OrmTransactionContext, EntityManager>();
  const contextOf = (em: EntityManager): OrmTransactionContext => {
    const context: OrmTransactionContext = {
      tx: fromMikroOrm(em),
      async insertOrder(id) {
        em.create(Order, { id, note: `order ${id}` });
        await em.flush();
      },
    };
    managers.set(context, em);
    return context;
  };
  const managerOf = (context: OrmTransactionContext): EntityManager => {
    const em = managers.get(context);
    if (em === undefined) throw new Error('not a context of this rig');
    return em;
  };
  return {
    store: database.store,
    controls: database.controls,
    transaction: (work) => orm.em.transactional((em) => work(contextOf(em))),
    nested: (outer, inner) => managerOf(outer).transactional((em) => inner(contextOf(em))),
    async mistakes() {
      const forkKeptAfterCommit = await orm.em.transactional(async (em) => em);
      const forkKeptAfterRollback = await orm.em
        .transactional(async (em) => {
          throw new RolledBack(em);
        })
        .catch((error: unknown) => {
          if (error instanceof RolledBack) return error.em;
          throw error;
        });
      const begunAndCommitted = orm.em.fork();
      await begunAndCommitted.begin();
      await begunAndCommitted.commit();
      const adapterKeptAfterCommit = await orm.em.transactional(async (em) => fromMikroOrm(em));
      return [
        { name: 'global-orm.em', handle: () => fromMikroOrm(orm.em) },
        { name: 'fork-outside-any-transaction', handle: () => fromMikroOrm(orm.em.fork()) },
        { name: 'transactional-fork-kept-after-commit', handle: () => fromMikroOrm(forkKeptAfterCommit) },
        { name: 'transactional-fork-kept-after-rollback', handle: () => fromMikroOrm(forkKeptAfterRollback) },
        { name: 'fork-after-begin-and-commit', handle: () => fromMikroOrm(begunAndCommitted) },
        { name: 'adapter-made-inside-used-after-commit', handle: () => adapterKeptAfterCommit },
        // @ts-expect-error the MikroORM instance is not an EntityManager
        { name: 'the-MikroORM-instance', handle: () => fromMikroOrm(orm) },
      ];
    },
    runThroughOutbox: (outboxTransaction, work) => outboxTransaction(() => orm.em.transactional((em) => work(contextOf(em)))),
    async orderExists(id) {
      const rows = await database.sql(`SELECT id FROM ${database.orders} WHERE id = ${database.placeholder}`, [id]);
      return rows.length === 1;
    },
    cleanup: database.cleanup,
  };
}

/** One harness per database MikroORM speaks, for the shared adapter suite. */
export const mikroOrmHarnesses: readonly AdapterHarness[] = DATABASES.map(([database, open]) => ({
  orm: 'MikroORM',
  database,
  setup: async () => mikroOrmRig(await open()),
}));
