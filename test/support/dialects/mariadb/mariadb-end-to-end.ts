import { Outbox } from '../../../../src/core/outbox.js';
import type { MysqlQueryable } from '../../../../src/stores/mysql/database.js';
import { MysqlOutboxStore, type MysqlTransaction } from '../../../../src/stores/mysql/mysql-store.js';
import { mysqlTableNames } from '../../../../src/stores/mysql/table-names.js';
import { natsRig, rabbitMqRig } from '../../broker-rigs.js';
import type { WriteTransaction } from '../../keyed-writers.js';
import { freshMysqlDatabase } from '../../mysql-database.js';
import { childTiming } from '../../relay-child.js';
import { type EndToEndHarness, enqueueInTransaction } from '../end-to-end-harness.js';

const names = mysqlTableNames('outbox');

export const mariadbEndToEnd: EndToEndHarness = {
  label: 'MariaDB',
  child: 'test/support/dialects/mariadb/mysql-relay-child.ts',
  brokers: [
    { name: 'RabbitMQ', makeRig: rabbitMqRig, probed: true },
    { name: 'NATS JetStream', makeRig: natsRig, probed: true },
  ],
  async setup() {
    const fresh = await freshMysqlDatabase('e2e_my');
    const store = new MysqlOutboxStore(fresh.database);
    await store.migrate();
    const outbox = new Outbox<MysqlTransaction, MysqlOutboxStore>(store);
    const { pool, database, sql } = fresh;
    // even writers on their own mysql2 connection inside beginTransaction(), odd ones through outbox.transaction
    const write: WriteTransaction = async (messages, rollback, writer) => {
      if (writer % 2 === 1) {
        return enqueueInTransaction<MysqlTransaction>(
          (work) => outbox.transaction(database, work),
          (tx) => outbox.enqueueMany(tx, messages),
          rollback,
        );
      }
      const conn = await pool.getConnection();
      try {
        await conn.beginTransaction();
        const ids = await outbox.enqueueMany(conn as unknown as MysqlQueryable, messages);
        await (rollback ? conn.rollback() : conn.commit());
        return ids;
      } catch (error) {
        await conn.rollback().catch(() => undefined);
        throw error;
      } finally {
        conn.release();
      }
    };
    return {
      childOutbox: { database: fresh.url },
      write,
      relay: (publisher, options = {}) => outbox.createRelay(publisher, { ...childTiming, ...options }),
      async holdings() {
        const rows = await sql(`SELECT owner, COUNT(*) AS n FROM ${names.partitions} WHERE owner IS NOT NULL GROUP BY owner`);
        return new Map(rows.map((row) => [String(row.owner), Number(row.n)]));
      },
      dead: () => store.listDead(100),
      left: async () => Number((await sql(`SELECT COUNT(*) AS n FROM ${names.outbox}`))[0]?.n),
      async insertPlain({ topic, type, key, payload }) {
        await sql('INSERT INTO outbox (topic, type, payload, `key`) VALUES (?, ?, ?, ?)', [topic, type, JSON.stringify(payload), key]);
        const [row, ...more] = await sql('SELECT id FROM outbox WHERE topic = ? AND `key` = ?', [topic, key]);
        if (row === undefined || more.length > 0) throw new Error('expected exactly the one row inserted by plain SQL');
        return String(row.id);
      },
      cleanup: fresh.cleanup,
    };
  },
};
