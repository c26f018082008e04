/**
 * The code of docs/metrics.md in a program that runs: a relay and an inbox with Prometheus metrics, served on
 * GET /metrics. It publishes one order, handles it once in the inbox, prints what its own /metrics says, and
 * shuts down.
 *
 *   DATABASE_URL=postgres://… AMQP_URL=amqp://… METRICS_PORT=9464 node --import tsx examples/metrics.ts
 */
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Outbox } from 'outboxer';
import { fromPgPool, PostgresOutboxStore, type SqlExecutor } from 'outboxer/postgres';
import { createRabbitMqPublisher } from 'outboxer/rabbitmq';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const db = fromPgPool(pool);
const store = new PostgresOutboxStore(db);
await store.migrate();
const outbox = new Outbox<SqlExecutor>(store);
const publisher = createRabbitMqPublisher({ url: process.env.AMQP_URL!, exchange: process.env.EXCHANGE ?? 'outbox' });

// #region docs/metrics.md
import { createServer } from 'node:http';
import { OutboxerMetrics } from 'outboxer/metrics';

const metrics = new OutboxerMetrics(); // a registry of its own; { registry } adds outboxer's metrics to yours
const relay = outbox.createRelay(publisher, { hooks: metrics.relayHooks() }); // counters, commit-to-confirm
metrics.observeRelay(relay); // partitions owned, relays alive, broker connected, ready: from memory
metrics.observeStore(store); // pending, dead, oldest pending age: read at scrape time, at most every 5 s
relay.start();

const server = createServer((request, response) => {
  if (request.url !== '/metrics') return void response.writeHead(404).end();
  void metrics.metrics().then(
    (text) => response.writeHead(200, { 'Content-Type': metrics.contentType }).end(text),
    () => response.writeHead(500).end(), // a rejection left unhandled would end the process
  );
});
server.listen(Number(process.env.METRICS_PORT ?? 9464), '127.0.0.1');
// #endregion

// #region docs/metrics.md
import { Inbox, PostgresInboxStore } from 'outboxer/consumer';

const inbox = new Inbox(new PostgresInboxStore(db), {
  consumer: 'billing',
  hooks: metrics.inboxHooks('billing'), // processed, duplicates, failures, dead, handler duration
});
// #endregion

await new PostgresInboxStore(db).migrate(); // the inbox's table
if (!server.listening) await new Promise<void>((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
const scrape = async (): Promise<string> => (await fetch(url)).text();
const valueOf = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

const id = await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 'orders.paid', type: 'order.paid', key: 'order-1', payload: { orderId: 1 } }));
while (!(valueOf(await scrape(), 'outboxer_published_total\\{destination="default"\\}') >= 1)) await new Promise((resolve) => setTimeout(resolve, 50));
const message = { id, topic: 'orders.paid', type: 'order.paid', key: 'order-1', headers: {}, payload: { orderId: 1 }, contentType: 'application/json', deliveryCount: 1 };
await inbox.handle(message, async () => undefined);
await inbox.handle(message, async () => undefined); // a redelivered copy: skipped

const text = await scrape();
const shown = ['outboxer_published_total{destination="default"}', 'outboxer_broker_connected', 'outboxer_relay_ready', 'outboxer_consumer_processed_total{consumer="billing"}', 'outboxer_consumer_duplicates_total{consumer="billing"}'];
console.log(JSON.stringify(Object.fromEntries(shown.map((name) => [name, valueOf(text, name.replace(/[{}"]/g, '\\$&'))]))));
await new Promise((resolve) => server.close(resolve));
await outbox.close();
await pool.end();
