import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import type { BrokerRig } from '../support/broker-rigs.js';
import { checkDeliveries } from '../support/order-checker.js';
import { v2Timing } from '../support/partition-relay-fixture.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { isolatedTopic } from '../support/pubsub-harness.js';
import { pubsubRig } from '../support/pubsub-rig.js';
import { uniqueName } from '../support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const timing = { ...v2Timing, leaseMs: 9000, publishTimeoutMs: 3000, errorBackoffMs: 50, maxErrorBackoffMs: 400 } as const;

describe('relays -> Pub/Sub emulator end to end', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const setUp = async (): Promise<{ fixture: PostgresFixture; rig: BrokerRig; outbox: Outbox<SqlExecutor> }> => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const rig = await pubsubRig();
    cleanups.push(() => rig.cleanup());
    return { fixture, rig, outbox: new Outbox<SqlExecutor>(fixture.store) };
  };
  const started = (relay: Relay): Relay => {
    cleanups.push(() => relay.stop());
    relay.start();
    return relay;
  };

  it('carries messages over many keys through 2 relays: none lost, none twice, in key order', async () => {
    const { fixture, rig, outbox } = await setUp();
    for (let i = 0; i < 2; i++) started(outbox.createRelay(rig.publisher(), timing));
    const topic = rig.topic('orders');
    const db = fromPgPool(fixture.pool);
    const expected: { id: string; key: string | null }[] = [];
    await Promise.all(
      Array.from({ length: 3 }, async (_, writer) => {
        for (let txn = 0; txn < 10; txn++) {
          const batch = Array.from({ length: 10 }, (_, i) => ({
            topic,
            type: 'order.changed',
            key: i === 9 ? undefined : `order-${writer}-${(txn + i) % 7}`,
            payload: { writer, txn, i },
          }));
          const ids = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, batch));
          ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
        }
      }),
    );
    await waitFor(() => new Set(rig.deliveries).size >= expected.length, { timeoutMs: 60_000, what: `all ${expected.length} at the subscription` });
    await waitFor(async () => (await fixture.pool.query(`SELECT count(*)::int AS n FROM "${fixture.schema}".outbox`)).rows[0]?.n === 0, {
      what: 'every row completed',
    });
    expect(checkDeliveries(expected, rig.deliveries)).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
  });

  it('pauses a topic whose Pub/Sub topic is missing, uncounted, and publishes its key in order once the topic exists', async () => {
    const { fixture, rig, outbox } = await setUp();
    const paused: string[] = [];
    const resumed: string[] = [];
    // Through a proxy, so that the relay can be kept away while the topic and its subscription are made (below).
    const proxy = await TcpProxy.start(rig.brokerPort);
    cleanups.push(() => proxy.close());
    started(
      outbox.createRelay(rig.publisher(proxy.port), {
        ...timing,
        hooks: { onTopicPaused: (e) => void paused.push(e.topic), onTopicResumed: (e) => void resumed.push(e.topic) },
      }),
    );
    const late = uniqueName('late');
    const ready = rig.topic('ready');
    const db = fromPgPool(fixture.pool);
    const lateIds = await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(
        tx,
        Array.from({ length: 4 }, (_, i) => ({ topic: late, type: 'test.event', key: 'k', payload: { i } })),
      ),
    );
    const readyIds = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, [{ topic: ready, type: 'test.event', payload: {} }]));
    await waitFor(() => paused.includes(late), { what: `the relay to pause topic ${late}` });
    await waitFor(() => rig.deliveries.includes(readyIds[0] ?? '?'), { what: 'the other topic to keep flowing' });
    const attempts = await fixture.pool.query(
      `SELECT max(attempts)::int AS n, count(*) FILTER (WHERE state = 'dead')::int AS dead FROM "${fixture.schema}".outbox WHERE topic = $1`,
      [late],
    );
    expect(attempts.rows[0]).toEqual({ n: 0, dead: 0 });

    // A subscription gets only what is published after it exists, and it can only be made after its topic:
    // the relay is refused while both are made, so that no probe lands between the two.
    proxy.setMode('refuse');
    const topic = await isolatedTopic(late);
    cleanups.push(() => topic.cleanup());
    proxy.setMode('forward');
    const pulled = await topic.waitForPulled(lateIds.length, 30_000);
    expect(pulled.map((m) => m.attributes?.['outbox-id'])).toEqual(lateIds);
    await waitFor(() => resumed.includes(late), { what: `topic ${late} to resume` });
  });
});
