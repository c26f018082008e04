import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { type BrokerRig, natsRig, rabbitMqRig } from '../support/broker-rigs.js';
import { checkDeliveries } from '../support/order-checker.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const fast = { pollIntervalMs: 20, maxPollIntervalMs: 100, errorBackoffMs: 50, maxErrorBackoffMs: 200, leaseMs: 10_000, publishTimeoutMs: 3000 };

describe.each([
  ['RabbitMQ', rabbitMqRig],
  ['NATS JetStream', natsRig],
])('outbox -> %s end to end', (_name, makeRig) => {
  let fixture: PostgresFixture | undefined;
  let rig: BrokerRig | undefined;
  let proxy: TcpProxy | undefined;
  const relays: Relay[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await rig?.cleanup();
    await proxy?.close();
    await fixture?.cleanup();
    fixture = undefined;
    rig = undefined;
    proxy = undefined;
  });

  async function setup() {
    fixture = await createPostgresFixture();
    rig = await makeRig();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    return { fixture, rig, outbox, db: fromPgPool(fixture.pool) };
  }

  it('publishes nothing for a rolled-back transaction and everything committed, plain SQL rows included', async () => {
    const { fixture, rig, outbox, db } = await setup();
    await expect(
      db.transaction(async (tx) => {
        await outbox.enqueue(tx, { topic: rig.topic('rolled'), type: 'x', payload: { n: 0 } });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const committed = await db.transaction((tx) => outbox.enqueue(tx, { topic: rig.topic('kept'), type: 'x', payload: { n: 1 } }));
    const sqlRow = await fixture.pool.query(
      `INSERT INTO "${fixture.schema}".outbox (topic, key, type, payload) VALUES ($1, 'k', 'x', '{"from":"sql"}') RETURNING id::text AS id`,
      [rig.topic('sql')],
    );
    const relay = outbox.createRelay(rig.publisher(), fast);
    relays.push(relay);
    relay.start();
    await waitFor(() => rig.deliveries.length >= 2, { what: 'two deliveries' });
    await waitFor(async () => (await fixture.store.stats()).pending === 0, { what: 'marks' });
    expect(new Set(rig.deliveries)).toEqual(new Set([committed, sqlRow.rows[0].id as string]));
    expect(await fixture.store.stats()).toMatchObject({ pending: 0, dead: 0 });
  });

  it('carries thousands of messages over many keys through 3 relays: none lost, none twice, none out of key order', async () => {
    const { fixture, rig, outbox, db } = await setup();
    for (let i = 0; i < 3; i++) {
      const relay = outbox.createRelay(rig.publisher(), { ...fast, batchSize: 100, owner: `e2e-${i}` });
      relays.push(relay);
      relay.start();
    }
    const expected: { id: string; key: string | null }[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, writer) => {
        for (let txn = 0; txn < 60; txn++) {
          const batch = Array.from({ length: 10 }, (_, i) => ({
            topic: rig.topic(`w${writer}`),
            type: 'order.changed',
            key: i === 9 ? undefined : `order-${writer}-${(txn * 7 + i) % 40}`,
            payload: { writer, txn, i },
          }));
          const ids = await db.transaction((tx) => outbox.enqueueMany(tx, batch));
          ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
        }
      }),
    );
    await waitFor(() => new Set(rig.deliveries).size >= expected.length, { timeoutMs: 60_000, what: `all ${expected.length} delivered` });
    await waitFor(
      async () => {
        const stats = await fixture.store.stats(); // a completion deletes the pending row
        return stats.pending === 0;
      },
      { what: 'marks' },
    );
    expect(checkDeliveries(expected, rig.deliveries)).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
    expect(await fixture.store.stats()).toMatchObject({ pending: 0, scheduled: 0, dead: 0 });
  });

  it('rides out a broker outage: retried, delivered, nothing lost, key order kept', async () => {
    const { fixture, rig, outbox, db } = await setup();
    proxy = await TcpProxy.start(rig.brokerPort);
    const failures: string[] = [];
    const hooks = { onError: (e: { error: string }) => failures.push(e.error), onRetry: (e: { error: string }) => failures.push(e.error) };
    const relay = outbox.createRelay(rig.publisher(proxy.port), { ...fast, hooks, retry: { baseDelayMs: 100, maxDelayMs: 400, maxAttempts: 1000 } });
    relays.push(relay);
    relay.start();
    const expected: { id: string; key: string | null }[] = [];
    const write = async (count: number) => {
      const batch = Array.from({ length: count }, (_, i) => ({ topic: rig.topic('outage'), type: 'x', key: `k${i % 5}`, payload: { i } }));
      const ids = await db.transaction((tx) => outbox.enqueueMany(tx, batch));
      ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
    };
    await write(50);
    await waitFor(() => new Set(rig.deliveries).size >= 50, { what: 'delivery before the outage' });
    proxy.setMode('refuse');
    await write(100);
    // The outage is seen: publishes fail (broker unavailable: given back uncounted; or a confirm timeout:
    // retried with backoff), and the relay reports why.
    const seen = () => failures.filter((error) => /OUTBOXER_(BROKER_UNAVAILABLE|PUBLISH_TIMEOUT)/.test(error)).length;
    await waitFor(() => seen() > 0, { what: 'publishes failing on the unreachable broker' });
    proxy.setMode('forward');
    await write(50);
    await waitFor(() => new Set(rig.deliveries).size >= expected.length, { timeoutMs: 30_000, what: 'all delivered after the outage' });
    await waitFor(async () => (await fixture.store.stats()).pending === 0, { what: 'marks' });
    const report = checkDeliveries(expected, rig.deliveries);
    expect(report.lost).toEqual([]);
    expect(report.phantom).toEqual([]);
    expect(report.orderInversions).toBe(0);
    expect(await fixture.store.stats()).toMatchObject({ dead: 0 });
    expect((await fixture.pool.query(`SELECT count(*)::int AS n FROM "${fixture.schema}".outbox`)).rows[0].n).toBe(0);
  });

  it('parks a message the broker will never take while other keys keep flowing', async () => {
    const { fixture, rig, outbox, db } = await setup();
    const relay = outbox.createRelay(rig.publisher(), fast);
    relays.push(relay);
    relay.start();
    const huge = { blob: 'x'.repeat(2 * 1024 * 1024) };
    const big = new Outbox<SqlExecutor>(fixture.store, { maxPayloadBytes: 4 * 1024 * 1024 });
    const poison = await db.transaction((tx) => big.enqueue(tx, { topic: rig.topic('poison'), type: 'x', key: 'a', payload: huge }));
    const healthy = await db.transaction((tx) =>
      outbox.enqueueMany(
        tx,
        Array.from({ length: 30 }, (_, i) => ({ topic: rig.topic('ok'), type: 'x', key: `k${i % 3}`, payload: { i } })),
      ),
    );
    await waitFor(() => healthy.every((id) => rig.deliveries.includes(id)), { what: 'healthy messages delivered' });
    const dead = await waitFor(async () => (await fixture.store.listDead(10)).find((d) => d.id === poison), { what: 'poison parked' });
    expect(dead.reason).toContain('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect(rig.deliveries).not.toContain(poison);
  });
});
