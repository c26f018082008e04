/**
 * A consumer process for the crash test: it handles messages through the inbox and, once a message's
 * inbox transaction committed, prints `committed <id>` and blocks before the broker ack, waiting to be
 * killed with SIGKILL. Configured by the CONSUMER_CRASH_CONFIG environment variable (JSON).
 */
import pg from 'pg';
import { Inbox } from '../../src/consumer/inbox.js';
import { createNatsConsumer } from '../../src/brokers/nats/consumer/index.js';
import { PostgresInboxStore } from '../../src/stores/postgres/inbox/postgres-inbox-store.js';
import { createRabbitMqConsumer } from '../../src/brokers/rabbitmq/consumer/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';

export interface CrashChildConfig {
  readonly databaseUrl: string;
  readonly schema: string;
  readonly consumer: string;
  readonly rabbitmq?: { url: string; exchange: string; queue: string; bindingKey: string };
  readonly nats?: { servers: string; stream: string; durable: string; subjectPrefix: string; ackWaitMs: number };
}

const config = JSON.parse(process.env.CONSUMER_CRASH_CONFIG ?? '{}') as CrashChildConfig;
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
const inbox = new Inbox(new PostgresInboxStore(fromPgPool(pool), { schema: config.schema }), { consumer: config.consumer });
const handler = async (message: { id: string; key: string | null }, tx: SqlExecutor): Promise<void> => {
  await tx.query(`INSERT INTO "${config.schema}".applied (message_id, key) VALUES ($1, $2)`, [message.id, message.key]);
};
const hooks = {
  async beforeAck(event: { id: string; status: string }): Promise<void> {
    process.stdout.write(`${event.status} ${event.id}\n`);
    await new Promise(() => undefined); // never acks: the test kills us here
  },
};
const consumer =
  config.rabbitmq !== undefined
    ? createRabbitMqConsumer<SqlExecutor>({
        url: config.rabbitmq.url,
        exchange: config.rabbitmq.exchange,
        queue: config.rabbitmq.queue,
        bindingKeys: [config.rabbitmq.bindingKey],
        inbox,
        handler,
        hooks,
      })
    : createNatsConsumer<SqlExecutor>({ ...config.nats!, inbox, handler, hooks });
await consumer.start();
process.stdout.write('ready\n');
