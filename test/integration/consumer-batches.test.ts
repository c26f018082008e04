import { afterEach, describe, expect, it } from 'vitest';
import type { OutboxMessage } from '../../src/core/message.js';
import type { InboxClaim, InboxEntryRef } from '../../src/core/ports/inbox-store.js';
import { isOutboxTransaction, type OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import type { Publisher } from '../../src/core/ports.js';
import { Inbox } from '../../src/consumer/inbox.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { createNatsConsumer } from '../../src/brokers/nats/consumer/index.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqConsumer } from '../../src/brokers/rabbitmq/consumer/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { PostgresInboxStore } from '../../src/stores/postgres/inbox/index.js';
import { createConsumerFixture, outboxMessage, type ConsumerFixture } from '../support/consumer-fixture.js';
import { addStream, natsAdmin } from '../support/nats-harness.js';
import { openAdmin } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const fastRetry = { baseDelayMs: 50, maxDelayMs: 100, jitter: 0 };
const WINDOW = 16;
/** JetStream's ack_wait in the stop test: what a delivery given back to a stale pull request waits at most. */
const ACK_WAIT_MS = 2000;

type Cleanup = () => Promise<unknown>;
type Handler = (m: ReceivedMessage, tx: SqlExecutor) => Promise<void>;

/** One broker: a queue or stream of the test's own, its publisher, and a consumer over it with a window of 16. */
interface BrokerRig {
  readonly topic: string;
  readonly publisher: Publisher;
  start(inbox: Inbox<SqlExecutor>, handler: Handler, extra?: Record<string, unknown>): Promise<{ stop(): Promise<void> }>;
  /** Nothing left at the broker: every delivery acked or taken off. */
  settled(): Promise<boolean>;
  /** Messages ready at the broker (RabbitMQ: the queue's depth, with no consumer). */
  ready(): Promise<number>;
}

const rigs: Record<'rabbitmq' | 'nats', (cleanups: Cleanup[]) => Promise<BrokerRig>> = {
  async rabbitmq(cleanups) {
    const admin = await openAdmin();
    const [exchange, queue, prefix] = [uniqueName('bx'), uniqueName('bq'), uniqueName('t')];
    await admin.channel.assertExchange(exchange, 'topic', { durable: true });
    cleanups.push(async () => {
      await admin.channel.deleteQueue(queue).catch(() => undefined);
      await admin.channel.deleteExchange(exchange).catch(() => undefined);
      await admin.close();
    });
    const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange, confirmTimeoutMs: 5000 });
    cleanups.push(() => publisher.close());
    await admin.channel.assertQueue(queue, { durable: true });
    await admin.channel.bindQueue(queue, exchange, `${prefix}.#`);
    return {
      topic: `${prefix}.orders`,
      publisher,
      async start(inbox, handler, extra = {}) {
        const consumer = createRabbitMqConsumer<SqlExecutor>({
          url: services.amqpUrl,
          exchange,
          queue,
          bindingKeys: [`${prefix}.#`],
          prefetch: WINDOW,
          inbox,
          handler,
          stopTimeoutMs: 5000,
          ...extra,
        });
        cleanups.push(() => consumer.stop());
        await consumer.start();
        return consumer;
      },
      async settled() {
        const { messageCount, consumerCount } = await admin.channel.checkQueue(queue);
        return messageCount === 0 && consumerCount === 1;
      },
      async ready() {
        return (await admin.channel.checkQueue(queue)).messageCount;
      },
    };
  },
  async nats(cleanups) {
    const admin = await natsAdmin();
    const prefix = uniqueName('p');
    const stream = await addStream(admin, prefix);
    cleanups.push(async () => {
      await admin.jsm.streams.delete(stream);
      await admin.close();
    });
    const publisher = createNatsPublisher({ servers: services.natsUrl, subjectPrefix: prefix, publishTimeoutMs: 5000 });
    cleanups.push(() => publisher.close());
    const durable = uniqueName('d');
    return {
      topic: 'orders',
      publisher,
      async start(inbox, handler, extra = {}) {
        const consumer = createNatsConsumer<SqlExecutor>({
          servers: services.natsUrl,
          stream,
          durable,
          subjectPrefix: prefix,
          inbox,
          handler,
          maxAckPending: WINDOW,
          stopTimeoutMs: 5000,
          ...extra,
        });
        cleanups.push(() => consumer.stop());
        await consumer.start();
        return consumer;
      },
      async settled() {
        const info = await admin.jsm.consumers.info(stream, durable);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      async ready() {
        return (await admin.jsm.consumers.info(stream, durable)).num_pending;
      },
    };
  },
};

/** An inbox store over the fixture's migrated table that counts its transactions and the size of each batch claim. */
class CountingInboxStore extends PostgresInboxStore {
  transactions = 0;
  readonly batches: number[] = [];
  /** Every id a batch claim was asked for. */
  readonly batched = new Set<string>();

  override transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    this.transactions++;
    return super.transaction(work);
  }

  override claimMany(tx: OutboxTransaction, entries: readonly InboxEntryRef[]): Promise<InboxClaim[]>;
  override claimMany(tx: SqlExecutor, entries: readonly InboxEntryRef[]): Promise<InboxClaim[]>;
  override claimMany(tx: SqlExecutor | OutboxTransaction, entries: readonly InboxEntryRef[]): Promise<InboxClaim[]> {
    this.batches.push(entries.length);
    for (const entry of entries) this.batched.add(entry.id);
    return isOutboxTransaction(tx) ? super.claimMany(tx, entries) : super.claimMany(tx, entries);
  }
}

/** `count` messages over `keys` keys, `n` counting up within each key. */
function backlog(topic: string, count: number, keys: number): OutboxMessage[] {
  return Array.from({ length: count }, (_, i) => outboxMessage(topic, { key: `k${i % keys}`, payload: { n: Math.floor(i / keys) } }));
}

/** Inside a `describe`: a fresh consumer fixture and a rig of `broker` per test, both cleaned up after it. */
function scenes(broker: keyof typeof rigs): () => Promise<{ fixture: ConsumerFixture; rig: BrokerRig; inboxStore: CountingInboxStore }> {
  let fixture: ConsumerFixture | undefined;
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await fixture?.cleanup();
    fixture = undefined;
  });
  return async () => {
    fixture = await createConsumerFixture();
    const rig = await rigs[broker](cleanups);
    return { fixture, rig, inboxStore: new CountingInboxStore(fromPgPool(fixture.pool), { schema: fixture.schema }) };
  };
}

describe.each(['rabbitmq', 'nats'] as const)('%s consumer: deliveries handled in batches', (broker) => {
  const scene = scenes(broker);
  async function setup() {
    const { fixture, rig, inboxStore } = await scene();
    return { fixture, rig, inboxStore, seen: inboxStore };
  }

  /** Each key's applications in the order they committed, as `n`s; every message once. */
  async function appliedByKey(f: ConsumerFixture): Promise<Map<string, number[]>> {
    const rows = (await f.pool.query(`SELECT key, n FROM ${f.applied} ORDER BY seq`)).rows as { key: string; n: number }[];
    const byKey = new Map<string, number[]>();
    for (const { key, n } of rows) byKey.set(key, [...(byKey.get(key) ?? []), n]);
    return byKey;
  }

  it('takes a backlog in batches of at most half the window, applying each message once, in order per key', async () => {
    const { fixture, rig, seen, inboxStore } = await setup();
    const messages = backlog(rig.topic, 96, 6);
    for (const m of messages) await rig.publisher.publish(m);
    await rig.start(new Inbox(inboxStore, { consumer: 'billing' }), (m, tx) => fixture.apply(m, tx));
    await waitFor(async () => (await fixture.appliedCount()) === messages.length && (await rig.settled()), { what: 'backlog applied and acked' });
    const byKey = await appliedByKey(fixture);
    expect([...byKey.keys()].sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5']);
    for (const ns of byKey.values()) expect(ns).toEqual(Array.from({ length: 16 }, (_, n) => n));
    expect(Math.max(...seen.batches)).toBeLessThanOrEqual(WINDOW / 2);
    expect(seen.batches.filter((size) => size > 1).length).toBeGreaterThan(0);
    expect(seen.transactions).toBeLessThan(messages.length);
    expect(await fixture.inboxStore.stats('billing')).toEqual({ processed: 96, failed: 0, dead: 0 });
  });

  it('handles alone the batch of a failing handler, counting only its own failures, holding its key, and applies the others once', async () => {
    const { fixture, rig, inboxStore } = await setup();
    const messages = backlog(rig.topic, 32, 4);
    const failing = messages[5]!;
    const retried: string[] = [];
    let calls = 0;
    for (const m of messages) await rig.publisher.publish(m);
    const inbox = new Inbox(inboxStore, { consumer: 'billing', retry: fastRetry, hooks: { onRetry: (e) => retried.push(e.id) } });
    await rig.start(inbox, async (m, tx) => {
      await fixture.apply(m, tx);
      if (m.id === failing.id && calls++ < 2) throw new Error('downstream refused');
    });
    await waitFor(async () => (await fixture.appliedCount()) === messages.length && (await rig.settled()), { what: 'all applied and acked' });
    // its first run was in a batch, which rolled back uncharged; alone it failed once more (charged), then passed
    expect(inboxStore.batched.has(failing.id)).toBe(true);
    expect(retried).toEqual([failing.id]);
    expect(await fixture.inboxRow('billing', failing.id)).toMatchObject({ state: 'processed', attempts: 2 });
    for (const m of messages) expect(await fixture.appliedCount(m.id)).toBe(1);
    for (const ns of (await appliedByKey(fixture)).values()) expect(ns).toEqual(Array.from({ length: 8 }, (_, n) => n));
  });

  it('handles each delivery in a transaction of its own with maxBatch 1', async () => {
    const { fixture, rig, seen, inboxStore } = await setup();
    const messages = backlog(rig.topic, 24, 3);
    for (const m of messages) await rig.publisher.publish(m);
    await rig.start(new Inbox(inboxStore, { consumer: 'billing' }), (m, tx) => fixture.apply(m, tx), { maxBatch: 1 });
    await waitFor(async () => (await fixture.appliedCount()) === messages.length && (await rig.settled()), { what: 'all applied and acked' });
    expect(seen.transactions).toBe(messages.length);
    expect(seen.batches).toEqual([]);
  });
});

describe.each(['rabbitmq', 'nats'] as const)('%s consumer: stopping while deliveries wait in the batcher', (broker) => {
  const scene = scenes(broker);

  it('gives back the deliveries queued behind a busy key, unhandled, and lets the one in flight commit and ack', async () => {
    const { fixture: f, rig } = await scene();
    const messages = backlog(rig.topic, 6, 1);
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const consumer = await rig.start(
      new Inbox(f.inboxStore, { consumer: 'billing' }),
      async (m, tx) => {
        started++;
        await f.apply(m, tx);
        if (m.id === messages[0]!.id) await blocked;
      },
      broker === 'nats' ? { ackWaitMs: ACK_WAIT_MS } : {},
    );
    await rig.publisher.publish(messages[0]!);
    await waitFor(async () => started === 1, { what: 'the first delivery in its handler' });
    for (const m of messages.slice(1)) await rig.publisher.publish(m);
    await waitFor(async () => (await rig.ready()) === 0, { what: 'the others delivered, waiting behind their key' });
    const stopped = consumer.stop();
    release();
    await stopped;
    expect(started).toBe(1);
    expect(await f.appliedCount()).toBe(1);
    expect(await f.inboxRow('billing', messages[0]!.id)).toMatchObject({ state: 'processed' });
    // RabbitMQ requeues them when the channel closes. JetStream gets a nak for each, but one of them can go to the
    // pull request the stopped consumer left on the server (it lives until it expires) and wait out ack_wait there
    if (broker === 'rabbitmq')
      await waitFor(async () => (await rig.ready()) === messages.length - 1, { what: 'the five waiting deliveries back in the queue' });
    await rig.start(new Inbox(f.inboxStore, { consumer: 'billing' }), (m, tx) => f.apply(m, tx), broker === 'nats' ? { ackWaitMs: ACK_WAIT_MS } : {});
    await waitFor(async () => (await f.appliedCount()) === messages.length, { what: 'the five given back, applied by the next consumer' });
    await waitFor(() => rig.settled(), { what: 'every delivery acked' });
    expect(await f.appliedCount()).toBe(messages.length);
  });
});
