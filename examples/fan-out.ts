/**
 * The code of docs/fan-out.md in a program that runs: one order fanned out to RabbitMQ and to a partner's
 * webhook, then shutdown once both are published.
 */
import pg from 'pg';
import { createJsonLogger } from 'outboxer';
import { fromPgPool, PostgresOutboxStore } from 'outboxer/postgres';

const logger = createJsonLogger('warn');
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const db = fromPgPool(pool);
const store = new PostgresOutboxStore(db);
await store.migrate();

// #region docs/fan-out.md
import { Outbox } from 'outboxer';
import type { SqlExecutor } from 'outboxer/postgres';
import { createRabbitMqPublisher } from 'outboxer/rabbitmq';
import { createWebhookPublisher } from 'outboxer/webhook';

// producers: a message of a routed topic is stored once per destination, in the same transaction
const outbox = new Outbox<SqlExecutor>(store, {
  routes: [{ topic: 'orders.#', to: ['default', 'partner'] }], // default: the relay's own publisher
});

// the relay: its own publisher, and the named destinations with what each gets of the envelope
const relay = outbox.createRelay(createRabbitMqPublisher({ url: process.env.AMQP_URL!, exchange: 'outbox', logger }), {
  logger,
  destinations: {
    partner: {
      publisher: createWebhookPublisher({ url: process.env.PARTNER_WEBHOOK_URL!, secret: process.env.PARTNER_WEBHOOK_SECRET!, logger }),
      envelope: { headers: ['correlation-id'] },   // the partner gets no internal headers (tenant, traceparent, ...)
    },
  },
});
relay.start();

await outbox.transaction(db, (tx) =>
  outbox.enqueue(tx, { topic: 'orders.created', type: 'order.created', key: 'order-1', payload: { id: 1 }, headers: { tenant: 'acme', 'correlation-id': 'c-1' } }),
);
// #endregion

for (;;) {
  const { pending, scheduled } = await store.stats();
  if (pending + scheduled === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await outbox.close();
await pool.end();
