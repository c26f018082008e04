import type { EventEmitter } from 'node:events';
import { DataSource, EntitySchema, type DataSourceOptions, type EntityManager, type QueryRunner } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { fromTypeOrm, TYPEORM_FIX } from '../../src/adapters/typeorm/index.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { services } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import type { AdapterDatabase, AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';
import { expectVouchedOnlyWhereOpen, floatingEnqueueCases, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { mysqlTestControls } from '../support/dialects/mariadb/mysql-test-controls.js';
import { postgresTestControls } from '../support/dialects/postgres/postgres-test-controls.js';
import { sqliteTestControls } from '../support/dialects/sqlite/sqlite-test-controls.js';

interface Order {
  id: number;
  note: string;
}

const OrderSchema = new EntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  columns: { id: { type: Number, primary: true }, note: { type: String } },
});

/** One database for TypeORM: its DataSource options, the outboxer store beside it, and plain SQL to check by. */
interface Target {
  readonly options: DataSourceOptions;
  readonly store: AdapterRig['store'];
  readonly controls: AdapterRig['controls'];
  readonly createOrders: string;
  orderExists(id: number): Promise<boolean>;
  cleanup(): Promise<void>;
}

async function postgresTarget(): Promise<Target> {
  const fixture = await createPostgresFixture();
  const sql = async (text: string, params: unknown[] = []) => (await fixture.pool.query(text, params)).rows as Record<string, unknown>[];
  return {
    options: { type: 'postgres', url: services.postgresUrl, schema: fixture.schema, extra: { max: 4 } },
    store: fixture.store,
    controls: postgresTestControls(sql, fixture.schema),
    createOrders: `CREATE TABLE "${fixture.schema}".orders (id integer PRIMARY KEY, note text NOT NULL)`,
    orderExists: async (id) => (await sql(`SELECT 1 FROM "${fixture.schema}".orders WHERE id = $1`, [id])).length === 1,
    cleanup: () => fixture.cleanup(),
  };
}

async function mariadbTarget(type: 'mariadb' | 'mysql'): Promise<Target> {
  const fresh = await freshMysqlDatabase('typeorm');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  return {
    options: { type, url: fresh.url, poolSize: 4 },
    store,
    controls: mysqlTestControls(fresh.sql),
    createOrders: 'CREATE TABLE orders (id INT PRIMARY KEY, note VARCHAR(200) NOT NULL) ENGINE=InnoDB',
    orderExists: async (id) => (await fresh.sql('SELECT 1 FROM orders WHERE id = ?', [id])).length === 1,
    cleanup: () => fresh.cleanup(),
  };
}

async function sqliteTarget(): Promise<Target> {
  const file = freshSqliteFile('typeorm');
  const store = new SqliteOutboxStore(file.database());
  await store.migrate();
  const plain = file.database();
  return {
    options: { type: 'better-sqlite3', database: file.path },
    store,
    controls: sqliteTestControls(plain),
    createOrders: 'CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT NOT NULL)',
    orderExists: (id) => plain.read(() => plain.get('SELECT 1 AS found FROM orders WHERE id = ?', [id]) !== undefined),
    cleanup: () => file.cleanup(),
  };
}

/** The rig with the DataSource itself, for the TypeORM-specific tests below. */
interface TypeOrmRig extends AdapterRig {
  readonly dataSource: DataSource;
}

async function typeOrmRig(target: Target): Promise<TypeOrmRig> {
  const dataSource = await new DataSource({ ...target.options, entities: [OrderSchema] }).initialize();
  await dataSource.query(target.createOrders);
  const managers = new WeakMap<OrmTransactionContext, EntityManager>();
  const contextOf = (manager: EntityManager): OrmTransactionContext => {
    const context: OrmTransactionContext = {
      tx: fromTypeOrm(manager),
      insertOrder: async (id) => void (await manager.insert(OrderSchema, { id, note: `order ${id}` })),
    };
    managers.set(context, manager);
    return context;
  };
  const runners: QueryRunner[] = [];
  const transaction = <T>(work: (context: OrmTransactionContext) => Promise<T>) => dataSource.transaction((manager) => work(contextOf(manager)));
  return {
    dataSource,
    store: target.store,
    controls: target.controls,
    transaction,
    nested: (outer, inner) => {
      const manager = managers.get(outer);
      if (manager === undefined) throw new Error('not a context of this rig');
      return manager.transaction((nested) => inner(contextOf(nested)));
    },
    async mistakes() {
      let committed: EntityManager | undefined;
      await dataSource.transaction(async (manager) => {
        committed = manager;
      });
      let rolledBack: EntityManager | undefined;
      await dataSource
        .transaction(async (manager) => {
          rolledBack = manager;
          throw new Error('roll back');
        })
        .catch(() => undefined);
      const neverStarted = dataSource.createQueryRunner();
      const committedRunner = dataSource.createQueryRunner();
      runners.push(neverStarted, committedRunner);
      await committedRunner.startTransaction();
      await committedRunner.commitTransaction();
      return [
        { name: 'the root manager (dataSource.manager)', handle: () => fromTypeOrm(dataSource.manager) },
        { name: 'the DataSource', handle: () => fromTypeOrm(dataSource as unknown as EntityManager) },
        { name: 'a manager kept after its transaction committed', handle: () => fromTypeOrm(committed as EntityManager) },
        { name: 'a manager kept after its transaction rolled back', handle: () => fromTypeOrm(rolledBack as EntityManager) },
        { name: 'the manager of a query runner before startTransaction()', handle: () => fromTypeOrm(neverStarted.manager) },
        { name: 'the manager of a query runner after commitTransaction()', handle: () => fromTypeOrm(committedRunner.manager) },
      ];
    },
    runThroughOutbox: (outboxTransaction, work) => outboxTransaction(() => transaction(work)),
    orderExists: target.orderExists,
    async cleanup() {
      for (const runner of runners.splice(0)) await runner.release();
      await dataSource.destroy();
      await target.cleanup();
    },
  };
}

const databases: readonly { readonly orm: string; readonly database: AdapterDatabase; readonly target: () => Promise<Target> }[] = [
  { orm: 'TypeORM', database: 'postgres', target: postgresTarget },
  { orm: 'TypeORM', database: 'mariadb', target: () => mariadbTarget('mariadb') },
  { orm: "TypeORM (type: 'mysql')", database: 'mariadb', target: () => mariadbTarget('mysql') },
  { orm: 'TypeORM', database: 'sqlite', target: sqliteTarget },
];

for (const { orm, database, target } of databases) {
  const harness: AdapterHarness = { orm, database, setup: async () => typeOrmRig(await target()) };
  describeAdapterConformance(harness);
}

/** The node-postgres client under a TypeORM transaction, with its protocol events (`connection`). */
interface PgClientInternals {
  readonly connection: EventEmitter;
  getTransactionStatus(): string | null;
}

const pgClientOf = (manager: EntityManager) => (manager.queryRunner as unknown as { readonly databaseConnection: PgClientInternals }).databaseConnection;

const message = (n: number) => ({ topic: 'orders.created', type: 'order.created', key: `order-${n}`, payload: { n } });

describe('fromTypeOrm: what TypeORM types and run-time checks refuse', () => {
  it('makes a DataSource and a QueryRunner type errors; the root manager compiles (TypeORM types it as any manager) and is refused at run time, naming the fix', () => {
    const dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' }); // never connected
    const runner = dataSource.createQueryRunner();
    // @ts-expect-error a DataSource is not an EntityManager
    expect(() => fromTypeOrm(dataSource)).toThrow(/a TypeORM DataSource, which runs each statement outside any transaction/);
    // @ts-expect-error a QueryRunner is not an EntityManager: pass its manager
    expect(() => fromTypeOrm(runner)).toThrow(/a TypeORM QueryRunner instead of its manager/);
    expect(() => fromTypeOrm(dataSource.manager)).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
    expect(() => fromTypeOrm(dataSource.manager)).toThrow(/the root EntityManager \(`dataSource\.manager`\)/);
    expect(() => fromTypeOrm(dataSource.manager)).toThrow(TYPEORM_FIX);
  });

  it('refuses a database outboxer does not speak with OUTBOXER_INVALID_OPTION, naming those it does', () => {
    const dataSource = new DataSource({ type: 'cockroachdb', url: 'postgres://nobody@127.0.0.1:1/none', timeTravelQueries: false });
    expect(() => fromTypeOrm(dataSource.manager)).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION' }));
    expect(() => fromTypeOrm(dataSource.manager)).toThrow(
      /'cockroachdb' is not supported; outboxer\/typeorm speaks 'postgres', 'mysql', 'mariadb', 'better-sqlite3'/,
    );
  });
});

for (const { database, target } of databases.filter(({ orm }) => orm === 'TypeORM')) {
  describe(`fromTypeOrm on ${database}: TypeORM's own paths`, () => {
    let rig: TypeOrmRig | undefined;
    afterEach(async () => {
      await rig?.cleanup();
      rig = undefined;
    });
    const setup = async () => {
      rig = await typeOrmRig(await target());
      // each store types the transactions of its own dialect; the dialect is checked at run time
      return { rig, dataSource: rig.dataSource, outbox: new Outbox(rig.store as unknown as StoreForOutbox<OutboxTransaction>) };
    };

    it('writes through a QueryRunner after startTransaction(): the order and the message commit together', async () => {
      const { rig, dataSource, outbox } = await setup();
      const runner = dataSource.createQueryRunner();
      try {
        await runner.startTransaction();
        await runner.manager.insert(OrderSchema, { id: 5, note: 'by hand' });
        const id = await outbox.enqueue(fromTypeOrm(runner.manager), message(5));
        expect(await rig.controls.rowCount()).toBe(0);
        await runner.commitTransaction();
        expect(id).toBeTypeOf('string');
      } finally {
        await runner.release();
      }
      expect(await rig.orderExists(5)).toBe(true);
      expect(await rig.controls.rowCount()).toBe(1);
    });

    it("refuses the manager once a COMMIT through manager.query ended the transaction behind TypeORM's back", async () => {
      const { rig, dataSource, outbox } = await setup();
      const attempt = dataSource.transaction(async (manager) => {
        await manager.query('COMMIT');
        await outbox.enqueue(fromTypeOrm(manager), message(6));
      });
      await expect(attempt).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
      expect(await rig.controls.rowCount()).toBe(0);
    });

    if (database === 'mariadb') {
      it('refuses the manager after DDL committed the transaction implicitly (TypeORM still calls it active)', async () => {
        const { rig, dataSource, outbox } = await setup();
        const attempt = dataSource.transaction(async (manager) => {
          await manager.insert(OrderSchema, { id: 7, note: 'committed by the DDL' });
          await manager.query('CREATE TABLE side_effects (id INT)');
          await outbox.enqueue(fromTypeOrm(manager), message(7));
        });
        await expect(attempt).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
        expect(await rig.controls.rowCount()).toBe(0);
      });
    }

    if (database === 'postgres') {
      it('refuses a transaction that failed and waits for its ROLLBACK, as the pg connection reports it', async () => {
        const { rig, dataSource, outbox } = await setup();
        const attempt = dataSource.transaction(async (manager) => {
          const client = pgClientOf(manager);
          const statusArrived = new Promise((resolve) => client.connection.once('readyForQuery', resolve));
          await expect(manager.query('SELECT 1 / 0')).rejects.toThrow(/division by zero/);
          await statusArrived;
          expect(fromTypeOrm(manager).status?.()).toBe('failed');
          await outbox.enqueue(fromTypeOrm(manager), message(8));
        });
        await expect(attempt).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringMatching(/failed/) });
        expect(await rig.controls.rowCount()).toBe(0);
      });

      it("does not vouch between a failed COMMIT's error and the ReadyForQuery after it: the enqueue made then is refused, not committed alone", async () => {
        const { rig, dataSource, outbox } = await setup();
        const runner = dataSource.createQueryRunner();
        try {
          await runner.query('CREATE TEMPORARY TABLE once (id integer, CONSTRAINT once_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)');
          await runner.startTransaction();
          await runner.query('INSERT INTO once VALUES (1), (1)'); // the duplicate fails the COMMIT, which ends the transaction
          const client = pgClientOf(runner.manager);
          let statusThen: string | undefined;
          let enqueuedThen: Promise<string> | undefined;
          // pg runs its own listener first: COMMIT's promise is settled, the ReadyForQuery saying 'I' not read yet
          client.connection.once('errorMessage', () => {
            statusThen = `${client.getTransactionStatus()}/${String(fromTypeOrm(runner.manager).status?.())}`;
            enqueuedThen = outbox.enqueue(fromTypeOrm(runner.manager), message(9));
          });
          await expect(runner.commitTransaction()).rejects.toThrow(/once_id/);
          expect(statusThen).toBe('T/undefined');
          await expect(enqueuedThen).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
        } finally {
          await runner.release();
        }
        expect(await rig.controls.rowCount()).toBe(0);
      });
    }
  });
}

class Rollback extends Error {}

for (const { orm, database, target } of databases) {
  describe(`fromTypeOrm (${orm}) on ${database}: an enqueue not awaited, then the transaction rolls back`, () => {
    let rig: TypeOrmRig | undefined;
    afterEach(async () => {
      await rig?.cleanup();
      rig = undefined;
    });
    const floatingRig = async (rollBack: (manager: EntityManager) => Promise<void>): Promise<FloatingEnqueueRig> => {
      const current = (rig = await typeOrmRig(await target()));
      const { dataSource } = current;
      return {
        outbox: new Outbox(current.store as unknown as StoreForOutbox<OutboxTransaction>),
        rowCount: () => current.controls.rowCount(),
        rollBackAfter: (turns, enqueue) =>
          dataSource
            .transaction(async (manager) => {
              enqueue(fromTypeOrm(manager));
              await microtaskTurns(turns);
              await rollBack(manager);
            })
            .then(
              () => expect.fail('the transaction was to roll back'),
              () => undefined,
            ),
        commit: (work) => dataSource.transaction((manager) => work(fromTypeOrm(manager))),
      };
    };
    const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
    // TypeORM still counts the transaction active: only the driver knows it ended
    const rawRollback = async (manager: EntityManager) => {
      await manager.query('ROLLBACK');
      throw new Rollback('and let TypeORM end it too');
    };

    it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {
      await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));
    });

    floatingEnqueueCases(floatingRig, {
      thrown: throwFromCallback,
      rawRollback: rawRollback,
      rawRollbackIs: 'a ROLLBACK through manager.query ends the transaction behind TypeORM',
    });
  });
}
