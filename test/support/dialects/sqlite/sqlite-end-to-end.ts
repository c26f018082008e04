import { Outbox } from '../../../../src/core/outbox.js';
import type { SqliteHandle } from '../../../../src/stores/sqlite/database.js';
import { sqliteTableNames } from '../../../../src/stores/sqlite/table-names.js';
import { SqliteOutboxStore } from '../../../../src/stores/sqlite/sqlite-store.js';
import { natsRig, rabbitMqRig } from '../../broker-rigs.js';
import type { WriteTransaction } from '../../keyed-writers.js';
import { mqttRig } from '../../mqtt-rig.js';
import { redisRig } from '../../redis-rig.js';
import { childTiming } from '../../relay-child.js';
import { freshSqliteFile } from '../../sqlite-file.js';
import { type EndToEndHarness, enqueueInTransaction } from '../end-to-end-harness.js';

const names = sqliteTableNames('outbox');

export const sqliteEndToEnd: EndToEndHarness = {
  label: 'SQLite',
  child: 'test/support/dialects/sqlite/sqlite-relay-child.ts',
  // The wire probe reads RabbitMQ and NATS as our consumers do; the other brokers' wire is read by clients we did not
  // write in their publishers' own tests.
  brokers: [
    { name: 'RabbitMQ', makeRig: rabbitMqRig, probed: true },
    { name: 'NATS JetStream', makeRig: natsRig, probed: true },
    { name: 'MQTT (Mosquitto)', makeRig: mqttRig, probed: false },
    { name: 'Redis Streams', makeRig: redisRig, probed: false },
  ],
  async setup() {
    const file = freshSqliteFile('e2e');
    const store = new SqliteOutboxStore(file.database());
    await store.migrate();
    const outbox = new Outbox<SqliteHandle, SqliteOutboxStore>(store);
    // each writer on a connection of its own, as separate application processes or requests would be
    const writers = Array.from({ length: 4 }, () => file.database());
    const write: WriteTransaction = async (messages, rollback, writer) => {
      const db = writers[writer] as (typeof writers)[number];
      return enqueueInTransaction<SqliteHandle>(
        (work) => db.transaction(work),
        (tx) => outbox.enqueueMany(tx, messages),
        rollback,
      );
    };
    const reader = file.connect();
    return {
      childOutbox: { database: file.path },
      write,
      relay: (publisher, options = {}) => outbox.createRelay(publisher, { ...childTiming, ...options }),
      async holdings() {
        const rows = reader.prepare(`SELECT owner, count(*) AS n FROM ${names.partitions} WHERE owner IS NOT NULL GROUP BY owner`).all() as {
          owner: string;
          n: number;
        }[];
        return new Map(rows.map((row) => [row.owner, row.n]));
      },
      dead: () => store.listDead(100),
      left: async () => (reader.prepare(`SELECT count(*) AS n FROM ${names.outbox}`).get() as { n: number }).n,
      async insertPlain({ topic, type, key, payload }) {
        const inserted = reader
          .prepare('INSERT INTO outbox (topic, type, payload, "key") VALUES (?, ?, ?, ?) RETURNING id')
          .get(topic, type, JSON.stringify(payload), key) as { id: string };
        return inserted.id;
      },
      cleanup: () => file.cleanup(),
    };
  },
};
