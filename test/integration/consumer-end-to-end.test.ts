import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Publisher } from '../../src/core/ports.js';
import type { Relay } from '../../src/core/relay.js';
import { Inbox } from '../../src/consumer/inbox.js';
import { createNatsConsumer } from '../../src/brokers/nats/consumer/index.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { createRabbitMqConsumer } from '../../src/brokers/rabbitmq/consumer/index.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { createConsumerFixture, type ConsumerFixture } from '../support/consumer-fixture.js';
import { addStream, natsAdmin } from '../support/nats-harness.js';
import { openAdmin } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

type Handler = (message: ReceivedMessage, tx: SqlExecutor) => Promise<void>;

interface Path {
  readonly topic: (suffix: string) => string;
  publisher(): Publisher;
  startConsumer(inbox: Inbox<SqlExecutor>, handler: Handler): Promise<{ stop(): Promise<void> }>;
  cleanup(): Promise<void>;
}

async function viaRabbitMq(): Promise<Path> {
  const admin = await openAdmin();
  const exchange = uniqueName('e2e_x');
  const queue = uniqueName('e2e_q');
  const prefix = uniqueName('t');
  const publishers: Publisher[] = [];
  return {
    topic: (suffix) => `${prefix}.${suffix}`,
    publisher() {
      const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange, confirmTimeoutMs: 3000 });
      publishers.push(publisher);
      return publisher;
    },
    async startConsumer(inbox, handler) {
      // One consumer instance, prefetch 32: RabbitMQ delivers in queue order, the consumer keeps it per key.
      const consumer = createRabbitMqConsumer({ url: services.amqpUrl, exchange, queue, bindingKeys: [`${prefix}.#`], prefetch: 32, inbox, handler });
      await consumer.start();
      return consumer;
    },
    async cleanup() {
      await Promise.all(publishers.map((p) => p.close()));
      await admin.channel.deleteQueue(queue);
      await admin.channel.deleteExchange(exchange);
      await admin.close();
    },
  };
}

async function viaNats(): Promise<Path> {
  const admin = await natsAdmin();
  const prefix = uniqueName('p');
  const stream = await addStream(admin, prefix);
  const publishers: Publisher[] = [];
  return {
    topic: (suffix) => suffix,
    publisher() {
      const publisher = createNatsPublisher({ servers: services.natsUrl, subjectPrefix: prefix, publishTimeoutMs: 3000 });
      publishers.push(publisher);
      return publisher;
    },
    async startConsumer(inbox, handler) {
      const consumer = createNatsConsumer({
        servers: services.natsUrl,
        stream,
        durable: uniqueName('d'),
        subjectPrefix: prefix,
        maxAckPending: 32,
        inbox,
        handler,
      });
      await consumer.start();
      return consumer;
    },
    async cleanup() {
      await Promise.all(publishers.map((p) => p.close()));
      await admin.jsm.streams.delete(stream);
      await admin.close();
    },
  };
}

const fastRelay = { pollIntervalMs: 20, maxPollIntervalMs: 100, batchSize: 100, leaseMs: 10_000, publishTimeoutMs: 3000 };

describe.each([
  ['RabbitMQ', viaRabbitMq],
  ['NATS JetStream', viaNats],
])('outbox -> %s -> inbox end to end', (_name, makePath) => {
  let fixture: ConsumerFixture | undefined;
  let path: Path | undefined;
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
    await path?.cleanup();
    await fixture?.cleanup();
    path = undefined;
    fixture = undefined;
  });

  it('applies each of thousands of messages exactly once, in order per key, through handler failures and retries', async () => {
    fixture = await createConsumerFixture();
    path = await makePath();
    const { pool, applied } = fixture;
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const db = fromPgPool(pool);

    let failuresInjected = 0;
    const failedOnce = new Set<string>();
    const inbox = new Inbox(fixture.inboxStore, { consumer: 'e2e', retry: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 5, jitter: 0 } });
    const consumer = await path.startConsumer(inbox, async (message, tx) => {
      await fixture!.apply(message, tx);
      // About one message in 40 fails on its first attempt, after writing: its write must roll back.
      if (message.id.endsWith('7') && message.id.charCodeAt(30) % 4 === 0 && !failedOnce.has(message.id)) {
        failedOnce.add(message.id);
        failuresInjected++;
        throw new Error('injected failure after a write');
      }
    });
    stops.push(() => consumer.stop());
    for (let i = 0; i < 2; i++) {
      const relay: Relay = outbox.createRelay(path.publisher(), { ...fastRelay, owner: `e2e-${i}` });
      relay.start();
      stops.unshift(() => relay.stop());
    }

    const expected: { id: string; key: string | null }[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, writer) => {
        const sequence = new Map<string, number>();
        for (let txn = 0; txn < 75; txn++) {
          const batch = Array.from({ length: 10 }, (_, i) => {
            const key = i === 9 ? undefined : `w${writer}-k${(txn * 3 + i) % 12}`;
            const n = key === undefined ? 0 : (sequence.get(key) ?? 0) + 1;
            if (key !== undefined) sequence.set(key, n);
            return { topic: path!.topic(`orders.w${writer}`), type: 'order.changed', key, payload: { n } };
          });
          const ids = await db.transaction((tx) => outbox.enqueueMany(tx, batch));
          ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
        }
      }),
    );
    expect(expected).toHaveLength(3000);

    await waitFor(async () => (await inbox.store.stats('e2e')).processed >= expected.length, {
      timeoutMs: 90_000,
      intervalMs: 200,
      what: `all ${expected.length} processed`,
    });
    expect(failuresInjected).toBeGreaterThan(10);
    const totals = (await pool.query(`SELECT count(*)::int AS rows, count(DISTINCT message_id)::int AS ids FROM ${applied}`)).rows[0];
    expect(totals).toEqual({ rows: expected.length, ids: expected.length });
    const known = (await pool.query(`SELECT count(*)::int AS n FROM ${applied} WHERE message_id = ANY($1::uuid[])`, [expected.map((m) => m.id)])).rows[0].n;
    expect(known).toBe(expected.length);
    // Per key, the order of application (seq) follows the order of enqueue (n = 1, 2, 3, ...).
    const inversions = await pool.query(`SELECT key, n, prev FROM (
        SELECT key, n, lag(n) OVER (PARTITION BY key ORDER BY seq) AS prev FROM ${applied} WHERE key IS NOT NULL) x
      WHERE (prev IS NULL AND n <> 1) OR (prev IS NOT NULL AND n <> prev + 1)`);
    expect(inversions.rows).toEqual([]);
    expect(await inbox.store.stats('e2e')).toEqual({ processed: expected.length, failed: 0, dead: 0 });
  });
  it('hands the handler a binary body as its bytes and a JSON body parsed, each with its content type', async () => {
    fixture = await createConsumerFixture();
    path = await makePath();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const received: ReceivedMessage[] = [];
    const inbox = new Inbox(fixture.inboxStore, { consumer: 'e2e-body' });
    const consumer = await path.startConsumer(inbox, async (message) => {
      received.push(message);
    });
    stops.push(() => consumer.stop());
    const relay = outbox.createRelay(path.publisher(), fastRelay);
    relay.start();
    stops.unshift(() => relay.stop());
    const protobuf = Uint8Array.from([0x08, 0x96, 0x01, 0x12, 0x00, 0xff]);
    await fromPgPool(fixture.pool).transaction((tx) =>
      outbox.enqueueMany(tx, [
        { topic: path!.topic('orders.bin'), key: 'order-9', type: 'order.proto', payload: protobuf, contentType: 'application/x-protobuf' },
        { topic: path!.topic('orders.bin'), key: 'order-9', type: 'order.json', payload: { z: 1, a: [1e21, 'é'] } },
      ]),
    );
    await waitFor(() => received.length >= 2, { timeoutMs: 30_000, what: 'both messages handled' });
    expect(received.map((m) => [m.type, m.contentType])).toEqual([
      ['order.proto', 'application/x-protobuf'],
      ['order.json', 'application/json'],
    ]);
    expect(received[0]?.payload).toBeInstanceOf(Uint8Array);
    expect([...(received[0]?.payload as Uint8Array)]).toEqual([...protobuf]);
    expect(received[1]?.payload).toEqual({ z: 1, a: [1e21, 'é'] });
  });
});
