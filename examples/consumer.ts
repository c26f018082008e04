/**
 * The consumer of the README and docs/consumer.md: applies each `order.paid` that examples/quickstart.ts
 * produces once, through the inbox, until SIGTERM.
 */
// #region README.md, docs/consumer.md
import pg from 'pg';
import { z } from 'zod';
import { Inbox, InboxRetention, MessageRegistry, PostgresInboxStore } from 'outboxer/consumer';
import { createRabbitMqConsumer } from 'outboxer/consumer/rabbitmq';
import { fromPgPool, type SqlExecutor } from 'outboxer/postgres';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const store = new PostgresInboxStore(fromPgPool(pool)); // table public.outbox_inbox
await store.migrate(); // or apply store.migrationSql() yourself

// The producer's payload: { orderId, paidAt } (README Quickstart)
const registry = new MessageRegistry<SqlExecutor>()
  .register('order.paid', z.object({ orderId: z.number(), paidAt: z.string() }), async (message, tx) => {
    // message.payload is typed and validated; write ONLY through tx
    await tx.query('UPDATE invoices SET paid_at = $1 WHERE order_id = $2', [message.payload.paidAt, message.payload.orderId]);
  });

const inbox = new Inbox(store, { consumer: 'billing', registry });
const consumer = createRabbitMqConsumer({
  url: process.env.AMQP_URL!, exchange: 'outbox', queue: 'billing', bindingKeys: ['orders.#'], inbox,
});
await consumer.start(); // declares the queue and binds it before anything is consumed
const retention = new InboxRetention(store, { retainProcessedMs: 7 * 24 * 3600_000 });
retention.start();

// Shutdown: no new deliveries; handlers in flight commit and ack; held ones go back to the queue.
process.once('SIGTERM', async () => {
  await consumer.stop();
  await retention.stop();
  await pool.end();
});
// #endregion
