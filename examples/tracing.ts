/**
 * docs/tracing.md: one trace from enqueue to the inbox handler. Producer, relay and consumer share this one
 * process here (in a service they usually do not; the trace context travels in the message either way). Prints
 * the spans it finished, one JSON object per line, and exits.
 *
 *   DATABASE_URL=postgres://… AMQP_URL=amqp://… node --import tsx examples/tracing.ts
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';

const exporter = new InMemorySpanExporter(); // in a service: an OTLP exporter
// #region docs/tracing.md
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

// What NodeSDK.start() of @opentelemetry/sdk-node registers: a tracer provider, async context, W3C propagation.
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
// #endregion

// #region docs/tracing.md
import pg from 'pg';
import { Outbox } from 'outboxer';
import { createOtelInstrumentation } from 'outboxer/otel';
import { PostgresOutboxStore, fromPgPool } from 'outboxer/postgres';
import { createRabbitMqPublisher } from 'outboxer/rabbitmq';

const otel = createOtelInstrumentation({ system: 'rabbitmq' }); // the global tracer provider and propagator

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const store = new PostgresOutboxStore(fromPgPool(pool));
// a `create` span per enqueued message; its context is stored in the message's traceparent header
const outbox = new Outbox(store, { instrumentation: otel.enqueue });
// a `publish` span per publish, continuing the trace the row carries
const relay = outbox.createRelay(otel.publisher(createRabbitMqPublisher({ url: process.env.AMQP_URL! })));
// #endregion

// #region docs/tracing.md
import { Inbox, PostgresInboxStore } from 'outboxer/consumer';
import { createRabbitMqConsumer } from 'outboxer/consumer/rabbitmq';

const tracer = trace.getTracer('billing');
const inbox = new Inbox(new PostgresInboxStore(fromPgPool(pool)), { consumer: 'billing' });
const consumer = createRabbitMqConsumer({
  url: process.env.AMQP_URL!, queue: 'billing', bindingKeys: ['orders.#'], inbox,
  instrumentation: otel.delivery, // a `process` span per attempt; the inbox transaction and handler run inside it
  handler: async (message, tx) => {
    await tracer.startActiveSpan('record invoice', async (span) => { // a child of the process span
      await tx.query('INSERT INTO invoices (order_id) VALUES ($1)', [(message.payload as { orderId: number }).orderId]);
      span.end();
    });
  },
});
// #endregion

await store.migrate();
await inbox.store.migrate();
await pool.query('CREATE TABLE IF NOT EXISTS invoices (order_id int PRIMARY KEY)');
await consumer.start();
await relay.verify();
relay.start();

await tracer.startActiveSpan('POST /orders/42/pay', async (request) => {
  await outbox.transaction(fromPgPool(pool), (tx) => outbox.enqueue(tx, { topic: 'orders.paid', type: 'order.paid', key: 'order-42', payload: { orderId: 42 } }));
  request.end();
});
while ((await pool.query('SELECT 1 FROM invoices WHERE order_id = 42')).rowCount === 0) await new Promise((resolve) => setTimeout(resolve, 20));

await consumer.stop();
await outbox.close();
await pool.end();
for (const span of exporter.getFinishedSpans()) {
  const { traceId, spanId } = span.spanContext();
  console.log(JSON.stringify({ name: span.name, traceId, spanId, parentSpanId: span.parentSpanContext?.spanId }));
}
