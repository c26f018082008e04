/**
 * The relay process of the cross-process tracing test: a relay over the test's schema whose publisher is wrapped
 * by `outboxer/otel`, set up as an application sets up its SDK (global tracer provider, W3C propagator, async
 * context manager) with spans kept in memory. Prints `ready`, and on SIGTERM stops the relay and prints
 * `spans <json>`: every span it finished. Configured by the TRACING_RELAY_CONFIG environment variable (JSON).
 */
import pg from 'pg';
import { Outbox } from '../../src/core/outbox.js';
import { createOtelInstrumentation } from '../../src/ops/tracing/index.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { inMemoryTracing, registerGlobals } from './tracing-harness.js';

export interface TracingRelayConfig {
  readonly databaseUrl: string;
  readonly schema: string;
  readonly rabbitmq?: { readonly url: string; readonly exchange: string };
  readonly nats?: { readonly servers: string; readonly subjectPrefix: string };
}

const config = JSON.parse(process.env.TRACING_RELAY_CONFIG ?? '{}') as TracingRelayConfig;
const sdk = inMemoryTracing();
registerGlobals({ propagator: true, provider: sdk.provider });

const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4 });
pool.on('error', () => undefined);
const outbox = new Outbox(new PostgresOutboxStore(fromPgPool(pool), { schema: config.schema }));
const otel = createOtelInstrumentation({ system: config.rabbitmq !== undefined ? 'rabbitmq' : 'nats' });
const publisher =
  config.rabbitmq !== undefined
    ? createRabbitMqPublisher({ url: config.rabbitmq.url, exchange: config.rabbitmq.exchange, confirmTimeoutMs: 3000 })
    : createNatsPublisher({ servers: config.nats!.servers, subjectPrefix: config.nats!.subjectPrefix, publishTimeoutMs: 3000 });
const relay = outbox.createRelay(otel.publisher(publisher), { pollIntervalMs: 20, maxPollIntervalMs: 100, leaseMs: 10_000, publishTimeoutMs: 3000 });
await relay.verify();
relay.start();
process.stdout.write('ready\n');

process.once('SIGTERM', () => {
  void (async () => {
    await outbox.close();
    await pool.end();
    await sdk.provider.forceFlush();
    process.stdout.write(`spans ${JSON.stringify(sdk.spans())}\n`);
  })();
});
