/**
 * The README's "Quickstart in code": a service's producer side with the relay in-process.
 * Run alone it is a service that relays until SIGTERM; examples/service.ts calls its payOrder.
 */
// #region README.md
import pg from 'pg';
import { Outbox } from 'outboxer';
import { PostgresOutboxStore, fromPgPool, type SqlExecutor } from 'outboxer/postgres';
import { createRabbitMqPublisher } from 'outboxer/rabbitmq';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL }); // your application's pool, your settings
const db = fromPgPool(pool);
const store = new PostgresOutboxStore(db); // table public.outbox
await store.migrate(); // or apply `npx outboxer sql` yourself
const outbox = new Outbox<SqlExecutor>(store);

// Relay: in-process (or run the `outboxer relay` daemon as its own process; run as many as you like).
// The outbox takes the publisher over: outbox.close() closes it.
const relay = outbox.createRelay(createRabbitMqPublisher({ url: process.env.AMQP_URL! }));
await relay.verify(); // fails fast on a bad password, vhost or port, or an unmigrated table; a server down is only logged
relay.start();

// Producer: inside your own transaction. outbox.transaction runs BEGIN/COMMIT for you and, once committed,
// wakes the relay above, which reads and publishes the messages at once (the in-process fast path).
export async function payOrder(orderId: number, requestId: string): Promise<void> {
  await outbox.transaction(db, async (tx) => {
    await tx.query('UPDATE orders SET status = $1 WHERE id = $2', ['paid', orderId]);
    await outbox.enqueue(tx, {
      topic: 'orders.paid', // AMQP routing key / NATS subject
      type: 'order.paid',
      key: `order-${orderId}`, // same key => published in order
      payload: { orderId, paidAt: new Date().toISOString() },
      headers: { 'correlation-id': requestId },
    });
  });
}

// Or in a transaction you manage yourself, on a client inside BEGIN ... COMMIT (never on the pool itself:
// that is refused, OUTBOXER_NOT_IN_TRANSACTION):
//   await outbox.enqueue(client, message); ...COMMIT...; outbox.notifyCommitted();

// Shutdown: outbox.close() stops the relay (publishes in flight are confirmed and their outcomes written, its
// partitions given back) and closes the publisher. The pool is yours: end it last.
process.once('SIGTERM', async () => {
  await outbox.close();
  await pool.end();
});
// #endregion
