import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { Inbox } from '../../src/consumer/inbox.js';
import { createNatsConsumer } from '../../src/brokers/nats/consumer/index.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { createRabbitMqConsumer } from '../../src/brokers/rabbitmq/consumer/index.js';
import { createOtelInstrumentation, type OtelInstrumentation } from '../../src/ops/tracing/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { cliEnv, startScript, type CliProcess } from '../support/cli-runner.js';
import { createConsumerFixture, type ConsumerFixture } from '../support/consumer-fixture.js';
import { freshDatabase, freshVhost } from '../support/fresh-services.js';
import { addStream, natsAdmin } from '../support/nats-harness.js';
import { openAdmin } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { inMemoryTracing, registerGlobals, traceparentOf, type SpanRecord } from '../support/tracing-harness.js';
import type { TracingRelayConfig } from '../support/tracing-relay-child.js';
import { waitFor } from '../support/wait-for.js';

type Handler = (message: ReceivedMessage, tx: SqlExecutor) => Promise<void>;

/** One broker, isolated: its own exchange and queue (RabbitMQ) or stream and durable (NATS), deleted afterwards. */
interface Route {
  readonly system: 'rabbitmq' | 'nats';
  readonly topic: string;
  /** The `messaging.destination.name` of the process span. */
  readonly consumedFrom: string;
  readonly relayConfig: Omit<TracingRelayConfig, 'databaseUrl' | 'schema'>;
  startConsumer(inbox: Inbox<SqlExecutor>, handler: Handler, otel: OtelInstrumentation): Promise<{ stop(): Promise<void> }>;
  cleanup(): Promise<void>;
}

async function viaRabbitMq(): Promise<Route> {
  const admin = await openAdmin();
  const exchange = uniqueName('trace_x');
  const queue = uniqueName('trace_q');
  const topic = `${uniqueName('t')}.order.placed`;
  return {
    system: 'rabbitmq',
    topic,
    consumedFrom: `${exchange}:${topic}:${queue}`,
    relayConfig: { rabbitmq: { url: services.amqpUrl, exchange } },
    async startConsumer(inbox, handler, otel) {
      const consumer = createRabbitMqConsumer({ url: services.amqpUrl, exchange, queue, bindingKeys: [topic], inbox, handler, instrumentation: otel.delivery });
      await consumer.start();
      return consumer;
    },
    async cleanup() {
      await admin.channel.deleteQueue(queue).catch(() => undefined);
      await admin.channel.deleteExchange(exchange).catch(() => undefined);
      await admin.close();
    },
  };
}

async function viaNats(): Promise<Route> {
  const admin = await natsAdmin();
  const prefix = uniqueName('p');
  const stream = await addStream(admin, prefix);
  const topic = 'order.placed';
  return {
    system: 'nats',
    topic,
    consumedFrom: `${prefix}.${topic}`,
    relayConfig: { nats: { servers: services.natsUrl, subjectPrefix: prefix } },
    async startConsumer(inbox, handler, otel) {
      const consumer = createNatsConsumer({
        servers: services.natsUrl,
        stream,
        durable: uniqueName('d'),
        subjectPrefix: prefix,
        inbox,
        handler,
        instrumentation: otel.delivery,
      });
      await consumer.start();
      return consumer;
    },
    async cleanup() {
      await admin.jsm.streams.delete(stream).catch(() => undefined);
      await admin.close();
    },
  };
}

const SECRET = 'card-4242-PAYLOAD-MUST-NOT-LEAK';

describe.each([
  ['RabbitMQ', viaRabbitMq],
  ['NATS JetStream', viaNats],
])('one trace from enqueue to inbox handler across processes, through %s', (_name, makeRoute) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("enqueue (test process) -> publish (relay process) -> process -> the handler's span (test process) share one trace, parented as the conventions say, without the payload", async () => {
    const fixture: ConsumerFixture = await createConsumerFixture();
    cleanups.push(() => fixture.cleanup());
    const route = await makeRoute();
    cleanups.push(() => route.cleanup());
    const unregister = registerGlobals(); // the async context manager an application's SDK setup registers
    cleanups.push(async () => unregister());
    const sdk = inMemoryTracing();
    cleanups.push(() => sdk.shutdown());
    const otel = createOtelInstrumentation({ system: route.system, tracerProvider: sdk.provider });
    const app = sdk.provider.getTracer('shop');

    const inbox = new Inbox(fixture.inboxStore, { consumer: 'billing' });
    const consumer = await route.startConsumer(
      inbox,
      async (message, tx) => {
        const span = app.startSpan('charge order'); // the handler's own span: a child of the process span, through the inbox transaction
        await context.with(trace.setSpan(context.active(), span), () => fixture.apply(message, tx));
        span.end();
      },
      otel,
    );
    cleanups.push(() => consumer.stop());

    const relay: CliProcess = startScript(
      'test/support/tracing-relay-child.ts',
      [],
      cliEnv({
        TRACING_RELAY_CONFIG: JSON.stringify({ databaseUrl: services.postgresUrl, schema: fixture.schema, ...route.relayConfig } satisfies TracingRelayConfig),
      }),
    );
    cleanups.push(async () => {
      if (relay.running) await relay.stop('SIGKILL');
    });
    await relay.waitForOutput(({ stdout }) => stdout.includes('ready\n'), 'the relay process to start');

    const outbox = new Outbox(fixture.store, { instrumentation: otel.enqueue });
    const request = app.startSpan('POST /orders');
    const id = await context.with(trace.setSpan(context.active(), request), () =>
      outbox.transaction(fromPgPool(fixture.pool), (tx) =>
        outbox.enqueue(tx, {
          topic: route.topic,
          type: 'order.placed',
          key: 'order-7',
          payload: { n: 1, card: SECRET },
          headers: { 'correlation-id': 'checkout-7' },
        }),
      ),
    );
    request.end();

    await waitFor(async () => (await fixture.appliedCount(id)) === 1 && sdk.named(`process ${route.consumedFrom}`).length === 1, {
      what: 'the handler to apply the message and its process span to end',
    });
    relay.child.kill('SIGTERM');
    await relay.waitForOutput(({ stdout }) => /^spans .*\n/m.test(stdout), 'the relay process to print its spans');
    const relaySpans = JSON.parse(/^spans (.*)$/m.exec(relay.stdout)![1]!) as SpanRecord[];
    expect((await relay.waitForExit()).code).toBe(0);

    const [post] = sdk.named('POST /orders');
    const [create] = sdk.named(`create ${route.topic}`);
    const [publish, ...republished] = relaySpans.filter((span) => span.name === `publish ${route.topic}`);
    const [process] = sdk.named(`process ${route.consumedFrom}`);
    const [charge] = sdk.named('charge order');
    expect(republished).toEqual([]);
    expect([post, create, publish, process, charge].every((span) => span !== undefined)).toBe(true);
    const traceIds = new Set([...sdk.spans(), ...relaySpans].map((span) => span.traceId));
    expect(traceIds).toEqual(new Set([post!.traceId]));

    // create under the request; publish and process both continue the creation context; the handler's span under process
    expect(create).toMatchObject({ kind: 'PRODUCER', parentSpanId: post!.spanId });
    expect(publish).toMatchObject({
      kind: 'CLIENT',
      parentSpanId: create!.spanId,
      links: [{ traceId: create!.traceId, spanId: create!.spanId }],
      status: { code: 0 },
    });
    expect(process).toMatchObject({
      kind: 'CONSUMER',
      parentSpanId: create!.spanId,
      links: [{ traceId: create!.traceId, spanId: create!.spanId }],
      status: { code: 0 },
    });
    expect(charge).toMatchObject({ parentSpanId: process!.spanId });

    const common = {
      'messaging.system': route.system,
      'messaging.message.id': id,
      'messaging.message.conversation_id': 'checkout-7',
      'outboxer.message.type': 'order.placed',
    };
    expect(create!.attributes).toMatchObject({ ...common, 'messaging.operation.type': 'create', 'messaging.destination.name': route.topic });
    expect(publish!.attributes).toMatchObject({
      ...common,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'publish',
      'messaging.destination.name': route.topic,
      'outboxer.message.attempts': 1,
    });
    expect(process!.attributes).toMatchObject({
      ...common,
      'messaging.operation.type': 'process',
      'messaging.destination.name': route.consumedFrom,
      'outboxer.inbox.consumer': 'billing',
      'outboxer.inbox.outcome': 'processed',
    });

    // the row stored the creation context, and the consumer received it unchanged
    const applied = (await fixture.pool.query(`SELECT headers FROM ${fixture.applied} WHERE message_id = $1`, [id])).rows[0] as {
      headers: Record<string, string>;
    };
    expect(applied.headers.traceparent).toBe(traceparentOf(create!));
    expect(JSON.stringify([...sdk.spans(), ...relaySpans])).not.toContain(SECRET);
  });
});

describe('the docs/tracing.md example', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("runs on a database and vhost of its own: request -> create -> publish and process -> the handler's span, one trace, and it exits", async () => {
    const [db, vhost] = await Promise.all([freshDatabase(), freshVhost()]);
    cleanups.push(
      () => db.drop(),
      () => vhost.delete(),
    );
    const run = startScript('examples/tracing.ts', [], cliEnv({ DATABASE_URL: db.url, AMQP_URL: vhost.url }));
    cleanups.push(async () => {
      if (run.running) await run.stop('SIGKILL');
    });
    const exit = await run.waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    const spans = exit.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { name: string; traceId: string; spanId: string; parentSpanId?: string });
    const byName = new Map(spans.map((span) => [span.name, span]));
    const parentOf = (name: string) => spans.find((span) => span.spanId === byName.get(name)?.parentSpanId)?.name;
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(Object.fromEntries([...byName.keys()].map((name) => [name, parentOf(name)]))).toEqual({
      'POST /orders/42/pay': undefined,
      'create orders.paid': 'POST /orders/42/pay',
      'publish orders.paid': 'create orders.paid',
      'process outbox:orders.paid:billing': 'create orders.paid',
      'record invoice': 'process outbox:orders.paid:billing',
    });
  });
});
