import pg from 'pg';
import { DataTypes, Sequelize, Transaction, type Model, type ModelStatic, type Options } from 'sequelize';
import { fromSequelize } from '../../src/adapters/sequelize/index.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import type { AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { mysqlTestControls } from '../support/dialects/mariadb/mysql-test-controls.js';
import { postgresTestControls } from '../support/dialects/postgres/postgres-test-controls.js';

/** The rig's side of one database: Sequelize on it, and what the store and the suite need besides. */
export interface SequelizeDatabase {
  readonly sequelize: Sequelize;
  /** The business table, `orders (id, note)`, as a Sequelize model (created by `sync()`). */
  readonly Order: ModelStatic<Model>;
  /** The same table's name in plain SQL. */
  readonly orders: string;
  readonly store: AdapterRig['store'];
  readonly controls: AdapterRig['controls'];
  /** Drops what the rig made (schema or database) after Sequelize's pool closed. */
  drop(): Promise<void>;
}

/** Fresh each time: Sequelize writes into the options object it is given (host, port, pool defaults, ...). */
export const quiet = (): Options => ({ logging: false, pool: { max: 4, min: 0 } });

async function withOrders(sequelize: Sequelize, schema?: string): Promise<ModelStatic<Model>> {
  const Order = sequelize.define(
    'Order',
    { id: { type: DataTypes.INTEGER, primaryKey: true }, note: { type: DataTypes.TEXT, allowNull: false } },
    { tableName: 'orders', timestamps: false, ...(schema === undefined ? {} : { schema }) },
  );
  await Order.sync();
  return Order;
}

export async function postgresDatabase(): Promise<SequelizeDatabase> {
  const schema = uniqueName('sqlz');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  pool.on('error', () => undefined);
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
  await store.migrate();
  const sequelize = new Sequelize(services.postgresUrl, quiet());
  const sql = async (text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as Record<string, unknown>[];
  return {
    sequelize,
    Order: await withOrders(sequelize, schema),
    orders: `"${schema}".orders`,
    store,
    controls: postgresTestControls(sql, schema),
    async drop() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** Sequelize speaks MariaDB through mysql2 (`mysql`) or through the MariaDB connector (`mariadb`). */
export async function mariadbDatabase(dialect: 'mysql' | 'mariadb'): Promise<SequelizeDatabase> {
  const fresh = await freshMysqlDatabase('sqlz');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  const sequelize = new Sequelize(fresh.url.replace(/^mysql:/, `${dialect}:`), quiet());
  return { sequelize, Order: await withOrders(sequelize), orders: 'orders', store, controls: mysqlTestControls(fresh.sql), drop: fresh.cleanup };
}

/** Which Sequelize transaction each context the suite holds came from, for nesting in it. */
const transactionOfContext = new WeakMap<OrmTransactionContext, Transaction>();

function contextOf(database: SequelizeDatabase, t: Transaction): OrmTransactionContext {
  const context: OrmTransactionContext = {
    tx: fromSequelize(t),
    insertOrder: async (id) => {
      await database.Order.create({ id, note: `order ${id}` }, { transaction: t });
    },
  };
  transactionOfContext.set(context, t);
  return context;
}

export function defined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the mistake was not set up');
  return value;
}

/** The rig over one Sequelize database: every AdapterRig member in Sequelize's own API. */
export function sequelizeRig(database: SequelizeDatabase): AdapterRig {
  const { sequelize } = database;
  const opened: Transaction[] = [];
  const run = <T>(work: (context: OrmTransactionContext) => Promise<T>) => sequelize.transaction((t) => work(contextOf(database, t)));
  return {
    store: database.store,
    controls: database.controls,
    transaction: run,
    nested: (context, inner) => {
      const outer = transactionOfContext.get(context);
      if (outer === undefined) throw new Error('nested() got a context this rig did not make');
      return sequelize.transaction({ transaction: outer }, (savepoint) => inner(contextOf(database, savepoint)));
    },
    async mistakes() {
      let committed: Transaction | undefined;
      let adapterKeptAfterCommit: OutboxTransaction | undefined;
      await sequelize.transaction(async (t) => {
        committed = t;
        adapterKeptAfterCommit = fromSequelize(t);
      });
      let rolledBack: Transaction | undefined;
      await sequelize
        .transaction(async (t) => {
          rolledBack = t;
          throw new Error('rolled back on purpose');
        })
        .catch(() => undefined);
      const unmanaged = await sequelize.transaction();
      await unmanaged.commit();
      let savepointOfCommittedOuter: OutboxTransaction | undefined;
      await sequelize.transaction(async (t) => {
        const savepoint = await sequelize.transaction({ transaction: t });
        savepointOfCommittedOuter = fromSequelize(savepoint);
      });
      // kept open while the suite tries the mistakes (cleanup rolls it back)
      const outer = await sequelize.transaction();
      opened.push(outer);
      let releasedSavepoint: OutboxTransaction | undefined;
      await sequelize.transaction({ transaction: outer }, async (savepoint) => {
        releasedSavepoint = fromSequelize(savepoint);
      });
      return [
        { name: 'the Sequelize instance', handle: () => fromSequelize(sequelize as never) },
        { name: 'query options { transaction: t }', handle: () => fromSequelize({ transaction: defined(committed) } as never) },
        { name: 'a transaction kept after it committed', handle: () => fromSequelize(defined(committed)) },
        { name: 'an adapter made inside a transaction, used after it committed', handle: () => defined(adapterKeptAfterCommit) },
        { name: 'a transaction kept after it rolled back', handle: () => fromSequelize(defined(rolledBack)) },
        { name: 'an unmanaged transaction after commit()', handle: () => fromSequelize(unmanaged) },
        { name: 'a transaction that never began (new Transaction)', handle: () => fromSequelize(new Transaction(sequelize, {})) },
        { name: 'a savepoint released while its outer transaction is still open', handle: () => defined(releasedSavepoint) },
        { name: 'a savepoint whose outer transaction committed', handle: () => defined(savepointOfCommittedOuter) },
      ];
    },
    runThroughOutbox: (outboxTransaction, work) => outboxTransaction(() => run(work)),
    async orderExists(id) {
      return (await database.Order.findByPk(id)) !== null;
    },
    async cleanup() {
      for (const t of opened) await t.rollback().catch(() => undefined); // refused when it already ended
      await sequelize.close();
      await database.drop();
    },
  };
}

export const sequelizeHarnesses: readonly AdapterHarness[] = [
  { orm: 'Sequelize', database: 'postgres', setup: async () => sequelizeRig(await postgresDatabase()) },
  { orm: 'Sequelize (mysql2)', database: 'mariadb', setup: async () => sequelizeRig(await mariadbDatabase('mysql')) },
  { orm: 'Sequelize (MariaDB connector)', database: 'mariadb', setup: async () => sequelizeRig(await mariadbDatabase('mariadb')) },
];

export const sequelizeDatabases: readonly { readonly name: string; readonly open: () => Promise<SequelizeDatabase> }[] = [
  { name: 'PostgreSQL (pg)', open: postgresDatabase },
  { name: 'MariaDB (mysql2)', open: () => mariadbDatabase('mysql') },
  { name: 'MariaDB (MariaDB connector)', open: () => mariadbDatabase('mariadb') },
];
