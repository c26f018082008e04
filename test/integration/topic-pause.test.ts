import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Publisher } from '../../src/core/ports.js';
import type { Relay } from '../../src/core/relay.js';
import type { RelayHooks } from '../../src/core/relay-options.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { natsAdmin, readStream } from '../support/nats-harness.js';
import { checkDeliveries } from '../support/order-checker.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { isolatedExchange } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { observedPublisher } from '../support/observed-publisher.js';
import { waitFor } from '../support/wait-for.js';

/** What one broker gives the scenario: a publisher, and the destination of the late topic, made on demand. */
interface Destination {
  readonly publisher: Publisher;
  readonly readyTopic: string;
  readonly lateTopic: string;
  /** Creates the missing topology: a binding (RabbitMQ) or a stream (NATS). */
  create(): Promise<void>;
  /** Ids received by a consumer, in arrival order per destination. */
  received(): Promise<string[]>;
  cleanup(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function rabbitMqDestination(): Promise<Destination> {
  const fx = await isolatedExchange();
  const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange: fx.exchange, confirmTimeoutMs: 2000 });
  const lateTopic = fx.topic('late').replace(/^t_/, 'late_');
  return {
    publisher,
    readyTopic: fx.topic('ready'),
    lateTopic,
    create: () => fx.admin.channel.bindQueue(fx.queue, fx.exchange, lateTopic).then(() => undefined),
    received: async () => fx.deliveries.map((d) => String(d.properties.messageId)),
    async cleanup() {
      await publisher.close();
      await fx.cleanup();
    },
  };
}

async function natsDestination(): Promise<Destination> {
  const admin = await natsAdmin();
  const prefix = uniqueName('p');
  const streams = [uniqueName('s_ready')];
  await admin.jsm.streams.add({ name: streams[0] as string, subjects: [`${prefix}.ready.>`] });
  const publisher = createNatsPublisher({ servers: services.natsUrl, publishTimeoutMs: 2000 });
  return {
    publisher,
    readyTopic: `${prefix}.ready.x`,
    lateTopic: `${prefix}.late.x`,
    async create() {
      const name = uniqueName('s_late');
      await admin.jsm.streams.add({ name, subjects: [`${prefix}.late.>`] });
      streams.push(name);
    },
    async received() {
      const all = await Promise.all(streams.map((stream) => readStream(admin, stream)));
      return all.flat().map((m) => m.id);
    },
    async cleanup() {
      await publisher.close();
      for (const stream of streams) await admin.jsm.streams.delete(stream).catch(() => undefined);
      await admin.close();
    },
  };
}

async function scenario(make: () => Promise<Destination>): Promise<void> {
  const fixture: PostgresFixture = await createPostgresFixture({ retainPublishedMs: 3_600_000 });
  cleanups.push(() => fixture.cleanup());
  const destination = await make();
  cleanups.push(() => destination.cleanup());
  const { readyTopic, lateTopic } = destination;
  const events: { kind: string; topic: string }[] = [];
  const hooks: RelayHooks = {
    onTopicPaused: (e) => events.push({ kind: 'paused', topic: e.topic }),
    onTopicResumed: (e) => events.push({ kind: 'resumed', topic: e.topic }),
    onDead: (e) => events.push({ kind: 'dead', topic: e.topic }),
  };
  const probe = observedPublisher(destination.publisher);
  const outbox = new Outbox<SqlExecutor>(fixture.store);
  const relay: Relay = outbox.createRelay(probe.publisher, {
    pollIntervalMs: 20,
    maxPollIntervalMs: 100,
    errorBackoffMs: 100,
    maxErrorBackoffMs: 800,
    leaseMs: 6000,
    publishTimeoutMs: 2000,
    retry: { maxAttempts: 2 },
    hooks,
  });
  cleanups.push(() => relay.stop());

  // Free keys on the topic that has a destination; keys on the late topic; one key that crosses both.
  const batch: { topic: string; key: string }[] = [];
  for (let round = 0; round < 4; round++) {
    for (const key of ['f0', 'f1', 'f2']) batch.push({ topic: readyTopic, key });
    for (const key of ['l0', 'l1']) batch.push({ topic: lateTopic, key });
    batch.push({ topic: round % 2 === 0 ? lateTopic : readyTopic, key: 'mixed' });
  }
  const ids = await fromPgPool(fixture.pool).transaction((tx) =>
    outbox.enqueueMany(
      tx,
      batch.map((m, i) => ({ ...m, type: 'test.event', payload: { i } })),
    ),
  );
  const expected = batch.map((m, i) => ({ id: ids[i] as string, key: m.key }));
  const free = expected.filter((m) => m.key.startsWith('f')).map((m) => m.id);
  relay.start();

  await waitFor(() => events.some((e) => e.kind === 'paused' && e.topic === lateTopic), { what: 'the relay to pause the late topic' });
  // The other topic flows meanwhile, and the paused topic is probed again and again with backoff.
  await waitFor(async () => free.every((id) => probe.confirmed.includes(id)), { what: 'the free keys of the ready topic' });
  await waitFor(() => probe.calls(lateTopic) >= 4, { what: 'several failed probes of the late topic' });
  const waiting = await fixture.pool.query<{ attempts: number; state: string; last_error: string | null }>(
    `SELECT attempts, state, last_error FROM "${fixture.schema}".outbox WHERE topic = $1`,
    [lateTopic],
  );
  for (const row of waiting.rows) {
    expect(row.state).toBe('pending');
    expect(row.attempts).toBe(0); // held and probed, never counted
  }
  expect(waiting.rows.some((row) => /OUTBOXER_(UNROUTABLE|NO_STREAM)/.test(row.last_error ?? ''))).toBe(true);

  await destination.create();
  await waitFor(async () => (await fixture.store.stats()).published === ids.length, { timeoutMs: 30_000, what: 'everything published' });

  const rows = await fixture.pool.query<{ attempts: number; state: string }>(`SELECT attempts, state FROM "${fixture.schema}".outbox`);
  // retry.maxAttempts is 2; the pause used up none: what is left is the publish itself (counted by a v1 claim, not by v2)
  expect(rows.rows.every((row) => row.state === 'published' && row.attempts === 0)).toBe(true);
  expect(checkDeliveries(expected, probe.confirmed)).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
  const received = await waitFor(
    async () => {
      const got = await destination.received();
      return got.length >= ids.length ? got : undefined;
    },
    { what: 'every message at the consumer' },
  );
  expect(new Set(received)).toEqual(new Set(ids));
  expect(events.filter((e) => e.kind !== 'dead')).toEqual([
    { kind: 'paused', topic: lateTopic },
    { kind: 'resumed', topic: lateTopic },
  ]);
  expect(events.some((e) => e.kind === 'dead')).toBe(false);
}

describe('a missing destination pauses its topic, uses up no attempts, and resumes by itself', () => {
  it('RabbitMQ: no queue bound for a topic until the binding is made late', async () => {
    await scenario(rabbitMqDestination);
  });

  it('NATS JetStream: no stream for a subject until the stream is made late', async () => {
    await scenario(natsDestination);
  });

  it('RabbitMQ: with declareExchange off, a missing exchange pauses every topic until it exists', async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const fx = await isolatedExchange();
    cleanups.push(() => fx.cleanup());
    const exchange = uniqueName('ox_late_ex');
    const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange, declareExchange: false, confirmTimeoutMs: 2000 });
    cleanups.push(() => publisher.close());
    const paused: string[] = [];
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const relay = outbox.createRelay(publisher, {
      pollIntervalMs: 20,
      maxPollIntervalMs: 100,
      errorBackoffMs: 100,
      maxErrorBackoffMs: 800,
      retry: { maxAttempts: 1 },
      hooks: { onTopicPaused: (e) => paused.push(e.error) },
    });
    cleanups.push(() => relay.stop());
    const ids = await fromPgPool(fixture.pool).transaction((tx) =>
      outbox.enqueueMany(tx, [
        { topic: fx.topic('a'), type: 'x', key: 'k', payload: 1 },
        { topic: fx.topic('a'), type: 'x', key: 'k', payload: 2 },
      ]),
    );
    relay.start();
    await waitFor(() => paused.length > 0, { what: 'the topic to pause' });
    expect(paused[0]).toContain('OUTBOXER_NO_EXCHANGE');
    await fx.admin.channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
    cleanups.push(() => fx.admin.channel.deleteExchange(exchange).then(() => undefined));
    await fx.admin.channel.bindQueue(fx.queue, exchange, fx.topic('#'));
    const delivered = await fx.waitForDeliveries(2, 20_000);
    expect(delivered.map((d) => String(d.properties.messageId))).toEqual(ids);
    expect(await fixture.store.stats()).toMatchObject({ dead: 0 });
  });
});
