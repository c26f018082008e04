import { DataTypes, QueryTypes, Sequelize, Transaction } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromSequelize } from '../../src/adapters/sequelize/index.js';
import { ConfigurationError, OutboxerError } from '../../src/core/errors.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { waitFor } from '../support/wait-for.js';
import { defined, mariadbDatabase, postgresDatabase, quiet, type SequelizeDatabase } from './sequelize-adapter-rigs.js';

const message = (n: number) => ({ topic: 'orders.created', type: 'order.created', key: `order-${n}`, payload: { n } });

/** The driver connection a Sequelize transaction holds (Sequelize's typings do not declare it). */
const connectionOf = (t: Transaction): unknown => (t as unknown as { connection?: unknown }).connection;

/** What only Sequelize's adapter does: its type-level refusal, where statements go, and each driver's word on status. */
describe('fromSequelize', () => {
  describe('refusals', () => {
    let sequelize: Sequelize;
    beforeAll(() => {
      sequelize = new Sequelize(services.postgresUrl, quiet());
    });
    afterAll(async () => {
      await sequelize.close();
    });

    it('refuses the Sequelize instance at compile time and at once at run time, naming the fix', () => {
      // @ts-expect-error the Sequelize instance is no Transaction: each of its statements commits on its own
      const refuse = () => fromSequelize(sequelize);
      expect(refuse).toThrow(OutboxerError);
      expect(refuse).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
      expect(refuse).toThrow(
        /the Sequelize instance, on which each statement commits on its own.*await sequelize\.transaction\(async \(t\) => \{ await outbox\.enqueue\(fromSequelize\(t\), message\); \}\)/,
      );
    });

    it('refuses query options, a model and plain values, which are no transaction either', async () => {
      const Note = sequelize.define('Note', { body: DataTypes.TEXT });
      await sequelize.transaction(async (t) => {
        // @ts-expect-error query options are no Transaction: pass t itself
        expect(() => fromSequelize({ transaction: t })).toThrow(
          /query options \(\{ transaction: t \}\) instead of the transaction itself \(fromSequelize\(t\)\)/,
        );
      });
      // @ts-expect-error a model is no Transaction
      expect(() => fromSequelize(Note)).toThrow(/something that is not a Sequelize transaction/);
      expect(() => fromSequelize({} as never)).toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
      // what a CLS lookup outside any transaction gives
      expect(() => fromSequelize(undefined as never)).toThrow(/undefined instead of a transaction/);
      expect(() => fromSequelize(null as never)).toThrow(/null instead of a transaction/);
    });

    it('refuses a transaction that already committed or rolled back, at once', async () => {
      const committed = await sequelize.transaction();
      await committed.commit();
      expect(() => fromSequelize(committed)).toThrow(/a Sequelize transaction after its commit/);
      const rolledBack = await sequelize.transaction();
      await rolledBack.rollback();
      expect(() => fromSequelize(rolledBack)).toThrow(/a Sequelize transaction after its rollback/);
    });

    it('refuses a Sequelize of a database it does not speak, naming those it does', async () => {
      // the driver module is never loaded: the dialect alone is refused
      const mssql = new Sequelize({ dialect: 'mssql', dialectModule: {}, logging: false });
      try {
        const refuse = () => fromSequelize(new Transaction(mssql, {}));
        expect(refuse).toThrow(ConfigurationError);
        expect(refuse).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION' }));
        expect(refuse).toThrow(
          "fromSequelize supports Sequelize's postgres (PostgreSQL) and mysql and mariadb (MariaDB/MySQL) dialects; this transaction's Sequelize speaks mssql",
        );
      } finally {
        await mssql.close();
      }
    });
  });

  describe('on PostgreSQL (pg)', () => {
    let database: SequelizeDatabase;
    let outbox: Outbox<OutboxTransaction, StoreForOutbox<OutboxTransaction>>;
    beforeAll(async () => {
      database = await postgresDatabase();
      outbox = new Outbox(database.store as unknown as StoreForOutbox<OutboxTransaction>);
    });
    afterAll(async () => {
      await database.sequelize.close();
      await database.drop();
    });

    it('passes $n placeholders, a ? operator and PostgreSQL array parameters to node-postgres untouched', async () => {
      await database.sequelize.transaction(async (t) => {
        const tx = fromSequelize(t);
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
        const scalars = await tx.query(`SELECT '{"a": 1}'::jsonb ? $1 AS has_key, $2::bigint AS big, $3::boolean AS yes, $4::bytea AS bytes`, [
          'a',
          2n ** 62n,
          true,
          new Uint8Array([0, 255]),
        ]);
        expect(scalars.rows).toEqual([{ has_key: true, big: (2n ** 62n).toString(), yes: true, bytes: Buffer.from([0, 255]) }]);
      });
    });

    it('runs on the transaction itself: its rows commit and roll back with it, and affectedRows counts them', async () => {
      const { sequelize, Order, orders } = database;
      await sequelize.transaction(async (t) => {
        const written = await fromSequelize(t).query(`INSERT INTO ${orders} (id, note) VALUES ($1, $2), ($3, $4)`, [101, 'kept', 102, 'kept']);
        expect(written).toEqual({ rows: [], affectedRows: 2 });
        expect(await Order.count({ where: { id: [101, 102] }, transaction: t })).toBe(2);
        expect(await Order.count({ where: { id: [101, 102] } })).toBe(0);
      });
      await sequelize
        .transaction(async (t) => {
          await fromSequelize(t).query(`INSERT INTO ${orders} (id, note) VALUES ($1, $2)`, [103, 'gone']);
          throw new Error('roll back');
        })
        .catch(() => undefined);
      expect((await Order.findAll({ where: { id: [101, 102, 103] }, order: [['id', 'ASC']] })).map((row) => row.get('id'))).toEqual([101, 102]);
    });

    it('prepares a named statement on the transaction connection', async () => {
      await database.sequelize.transaction(async (t) => {
        const tx = fromSequelize(t);
        const name = uniqueName('outboxer_sequelize');
        await tx.query('SELECT $1::int + 1 AS next', [1], { name });
        const prepared = await tx.query('SELECT statement FROM pg_prepared_statements WHERE name = $1', [name]);
        expect(prepared.rows).toEqual([{ statement: 'SELECT $1::int + 1 AS next' }]);
        expect((await tx.query('SELECT $1::int + 1 AS next', [41], { name })).rows).toEqual([{ next: 42 }]);
      });
    });

    it("reports node-postgres' transaction status: open, failed after an error (enqueue refused), closed once it ended", async () => {
      let kept: OutboxTransaction | undefined;
      await database.sequelize
        .transaction(async (t) => {
          kept = fromSequelize(t);
          expect(kept.status?.()).toBe('open');
          // pg rejects at the ErrorResponse; the status ('E') comes with the ReadyForQuery after it
          const client = connectionOf(t) as { readonly connection: { once(event: 'readyForQuery', listener: () => void): unknown } };
          const statusArrived = new Promise<void>((resolve) => client.connection.once('readyForQuery', resolve));
          await expect(database.sequelize.query('SELECT 1 / 0', { transaction: t })).rejects.toThrow(/division by zero/);
          await statusArrived;
          expect(kept.status?.()).toBe('failed');
          await expect(outbox.enqueue(kept, message(1))).rejects.toThrow(/whose transaction failed and waits for its ROLLBACK/);
          throw new Error('roll back');
        })
        .catch(() => undefined);
      expect(defined(kept).status?.()).toBe('closed');
      expect(await database.controls.rowCount()).toBe(0);
    });

    it('refuses a transaction ended by a raw COMMIT behind Sequelize, writing nothing', async () => {
      const t = await database.sequelize.transaction();
      try {
        const tx = fromSequelize(t);
        await database.sequelize.query('COMMIT', { transaction: t });
        expect(tx.status?.()).toBe('closed');
        await expect(outbox.enqueue(tx, message(2))).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
        expect(await database.controls.rowCount()).toBe(0);
      } finally {
        await t.rollback();
      }
    });

    it('refuses a kept handle once its connection serves another transaction: nothing lands in that one', async () => {
      const single = new Sequelize(services.postgresUrl, { ...quiet(), pool: { max: 1, min: 0 } });
      const { orders } = database;
      try {
        let kept: OutboxTransaction | undefined;
        let keptConnection: unknown;
        await single.transaction(async (t) => {
          kept = fromSequelize(t);
          keptConnection = connectionOf(t);
        });
        await single.transaction(async (other) => {
          expect(connectionOf(other)).toBe(keptConnection);
          await expect(defined(kept).query(`INSERT INTO ${orders} (id, note) VALUES ($1, $2)`, [201, 'late'])).rejects.toThrow(
            /fromSequelize was given a Sequelize transaction after its commit/,
          );
        });
        expect(await database.Order.count({ where: { id: 201 } })).toBe(0);
      } finally {
        await single.close();
      }
    });
  });

  for (const dialect of ['mysql', 'mariadb'] as const) {
    describe(`on MariaDB (${dialect === 'mysql' ? 'mysql2' : 'MariaDB connector'})`, () => {
      let database: SequelizeDatabase;
      let outbox: Outbox<OutboxTransaction, StoreForOutbox<OutboxTransaction>>;
      beforeAll(async () => {
        database = await mariadbDatabase(dialect);
        outbox = new Outbox(database.store as unknown as StoreForOutbox<OutboxTransaction>);
      });
      afterAll(async () => {
        await database.sequelize.close();
        await database.drop();
      });

      it('runs ? placeholders with scalar and binary parameters on the transaction itself', async () => {
        await database.sequelize.transaction(async (t) => {
          const tx = fromSequelize(t);
          expect(tx.dialect).toBe('mysql');
          const written = await tx.query('INSERT INTO orders (id, note) VALUES (?, ?), (?, ?)', [1, 'a ? and a $1 in text', 2n, 'b']);
          expect(written).toEqual({ rows: [], affectedRows: 2 });
          const read = await tx.query(
            'SELECT note, ? AS bytes, CAST(? AS CHAR) AS big, ? AS yes, @@in_transaction AS in_transaction FROM orders WHERE id = ?',
            [new Uint8Array([0, 255]), 12_345_678_901n, true, 1],
          );
          expect(read.rows).toEqual([{ note: 'a ? and a $1 in text', bytes: Buffer.from([0, 255]), big: '12345678901', yes: 1, in_transaction: 1 }]);
          expect(await database.Order.count({ where: { id: [1, 2] } })).toBe(0);
        });
        expect(await database.Order.count({ where: { id: [1, 2] } })).toBe(2);
      });

      it('leaves the status to the database while Sequelize holds the transaction open, and reports closed after', async () => {
        let kept: OutboxTransaction | undefined;
        await database.sequelize.transaction(async (t) => {
          kept = fromSequelize(t);
          await kept.query('SELECT 1', []);
          expect(kept.status?.()).toBeUndefined();
        });
        expect(defined(kept).status?.()).toBe('closed');
        await expect(defined(kept).query('SELECT 1', [])).rejects.toThrow(expect.objectContaining({ code: 'OUTBOXER_NOT_IN_TRANSACTION' }));
      });

      it('refuses a transaction ended by a raw COMMIT behind Sequelize, writing nothing', async () => {
        const t = await database.sequelize.transaction();
        try {
          const tx = fromSequelize(t);
          await database.sequelize.query('COMMIT', { transaction: t });
          // the MariaDB connector keeps the server's status flags; mysql2 does not, and the store asks the server
          expect(tx.status?.()).toBe(dialect === 'mariadb' ? 'closed' : undefined);
          await expect(outbox.enqueue(tx, message(3))).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
          expect(await database.controls.rowCount()).toBe(0);
        } finally {
          await t.rollback();
        }
      });

      it('closes the handle when InnoDB rolled the transaction back to end a deadlock: later statements would run on their own', async () => {
        const { sequelize, Order } = database;
        await Order.bulkCreate([
          { id: 1000, note: 'seed' },
          { id: 1001, note: 'seed' },
        ]);
        const heavy = await sequelize.transaction();
        const victim = await sequelize.transaction();
        try {
          const [heavyConnection] = await sequelize.query<{ thread: number }>('SELECT CONNECTION_ID() AS thread', {
            type: QueryTypes.SELECT,
            transaction: heavy,
          });
          // InnoDB rolls back the lighter transaction of a deadlock: the heavy one has written 41 rows, the victim 1
          await Order.bulkCreate(
            Array.from({ length: 40 }, (_, i) => ({ id: 2000 + i, note: 'heavy' })),
            { transaction: heavy },
          );
          await Order.update({ note: 'heavy' }, { where: { id: 1001 }, transaction: heavy });
          const tx = fromSequelize(victim);
          await tx.query('UPDATE orders SET note = ? WHERE id = ?', ['victim', 1000]);
          const heavyWaits = Order.update({ note: 'heavy' }, { where: { id: 1000 }, transaction: heavy });
          // the processlist, not information_schema.innodb_trx: InnoDB refreshes that one only after 100 ms without a read,
          // which polling (here or by any other test on the server) never leaves it
          const waiting = `SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ? AND STATE = 'Updating' AND INFO LIKE 'UPDATE%'`;
          await waitFor(async () => (await sequelize.query(waiting, { type: QueryTypes.SELECT, replacements: [defined(heavyConnection).thread] })).length > 0, {
            what: 'the heavy transaction to wait for the victim',
          });
          await expect(tx.query('UPDATE orders SET note = ? WHERE id = ?', ['victim', 1001])).rejects.toMatchObject({ errno: 1213 });
          expect(tx.status?.()).toBe('closed');
          await expect(tx.query('SELECT 1', [])).rejects.toThrow(/fromSequelize was given a Sequelize transaction the database rolled back/);
          await expect(outbox.enqueue(tx, message(4))).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
          await heavyWaits;
          await heavy.commit();
        } finally {
          await victim.rollback().catch(() => undefined);
          await heavy.rollback().catch(() => undefined);
        }
        expect(await database.controls.rowCount()).toBe(0);
        expect(await Order.count({ where: { note: 'heavy' } })).toBe(42);
      });
    });
  }

  describe('on SQLite (sqlite3)', () => {
    it("refuses Sequelize's SQLite dialect: its sqlite3 and the store's better-sqlite3 are two copies of SQLite, blind to each other's locks", async () => {
      const file = freshSqliteFile('sqlz');
      const storeConnection = file.connect();
      const sequelize = new Sequelize({ ...quiet(), dialect: 'sqlite', storage: file.path });
      try {
        storeConnection.exec('BEGIN IMMEDIATE');
        // one copy of SQLite would make this BEGIN IMMEDIATE wait for the write lock the store's connection holds
        const t = await sequelize.transaction({ type: Transaction.TYPES.IMMEDIATE });
        try {
          expect(storeConnection.inTransaction).toBe(true);
          const refuse = () => fromSequelize(t);
          expect(refuse).toThrow(ConfigurationError);
          expect(refuse).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION' }));
          expect(refuse).toThrow(/sqlite dialect: its driver, sqlite3, links another copy of SQLite than outboxer's SQLite store \(better-sqlite3\)/);
        } finally {
          await t.rollback();
        }
      } finally {
        storeConnection.exec('ROLLBACK');
        await sequelize.close();
        await file.cleanup();
      }
    });
  });
});
