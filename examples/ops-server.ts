/**
 * docs/http-api.md, "Embedded": the HTTP server of operations next to a relay that runs inside the application.
 * It serves until SIGTERM, then stops the relay and closes the server. It prints the server's URL on stdout.
 *
 *   DATABASE_URL=postgres://… AMQP_URL=amqp://… OUTBOXER_ADMIN_TOKEN=$(openssl rand -hex 32) node --import tsx examples/ops-server.ts
 */
import pg from 'pg';
import { Outbox } from 'outboxer';
import { PostgresOutboxStore, fromPgPool, type SqlExecutor } from 'outboxer/postgres';
import { createRabbitMqPublisher } from 'outboxer/rabbitmq';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const store = new PostgresOutboxStore(fromPgPool(pool));
await store.migrate();
const outbox = new Outbox<SqlExecutor>(store);

// #region docs/http-api.md
import { createOpsServer } from 'outboxer/http';
import { OutboxerMetrics } from 'outboxer/metrics';

const metrics = new OutboxerMetrics();
const relay = outbox.createRelay(createRabbitMqPublisher({ url: process.env.AMQP_URL! }), { hooks: metrics.relayHooks() });
metrics.observeRelay(relay);
metrics.observeStore(store);
await relay.verify();
relay.start();

const server = createOpsServer({
  operator: store, // stats, dead messages, lag per topic, pauses, the relays and their partitions
  relay, // /health/ready and /api/stats
  metrics, // GET /metrics
  adminToken: process.env.OUTBOXER_ADMIN_TOKEN, // without one, every change is refused
  port: Number(process.env.OPS_PORT ?? 9465), // on 127.0.0.1; host: '0.0.0.0' makes reads need the token too
});
const { url } = await server.listen(); // the dashboard at `${url}/`

process.once('SIGTERM', async () => {
  await outbox.close(); // the relay stops (in-flight publishes confirmed), the publisher closes
  await server.close(); // then the server: /health/ready has answered until now
  await pool.end();
});
// #endregion

console.log(url);
