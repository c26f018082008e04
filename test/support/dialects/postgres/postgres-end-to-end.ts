import { Outbox } from '../../../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../../../src/stores/postgres/database.js';
import { natsRig, rabbitMqRig } from '../../broker-rigs.js';
import type { WriteTransaction } from '../../keyed-writers.js';
import { holdings } from '../../partition-relay-fixture.js';
import { createPostgresFixture } from '../../postgres-fixture.js';
import { childTiming } from '../../relay-child.js';
import { services } from '../../services.js';
import { type EndToEndHarness, enqueueInTransaction } from '../end-to-end-harness.js';

export const postgresEndToEnd: EndToEndHarness = {
  label: 'PostgreSQL',
  child: 'test/support/dialects/postgres/postgres-relay-child.ts',
  brokers: [
    { name: 'RabbitMQ', makeRig: rabbitMqRig, probed: true },
    { name: 'NATS JetStream', makeRig: natsRig, probed: true },
  ],
  async setup() {
    const fixture = await createPostgresFixture();
    const { pool, schema, store } = fixture;
    const outbox = new Outbox<SqlExecutor>(store);
    const database = fromPgPool(pool);
    // even writers on their own pg client between BEGIN and COMMIT, odd ones through outbox.transaction
    const write: WriteTransaction = async (messages, rollback, writer) => {
      if (writer % 2 === 1) {
        return enqueueInTransaction<SqlExecutor>(
          (work) => outbox.transaction(database, work),
          (tx) => outbox.enqueueMany(tx, messages),
          rollback,
        );
      }
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const ids = await outbox.enqueueMany(client, messages);
        await client.query(rollback ? 'ROLLBACK' : 'COMMIT');
        return ids;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    };
    return {
      childOutbox: { database: services.postgresUrl, schema },
      write,
      relay: (publisher, options = {}) => outbox.createRelay(publisher, { ...childTiming, ...options }),
      holdings: () => holdings(fixture),
      left: async () => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".outbox`)).rows[0]?.n ?? Number.NaN,
      dead: () => store.listDead(100),
      async insertPlain({ topic, type, key, payload }) {
        const inserted = await pool.query<{ id: string }>(
          `INSERT INTO "${schema}".outbox (topic, type, payload, key) VALUES ($1, $2, $3, $4) RETURNING id::text AS id`,
          [topic, type, JSON.stringify(payload), key],
        );
        const [row, ...more] = inserted.rows;
        if (row === undefined || more.length > 0) throw new Error('expected exactly the one row inserted by plain SQL');
        return row.id;
      },
      cleanup: fixture.cleanup,
    };
  },
};
