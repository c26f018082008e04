import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { services } from '../support/services.js';
import { checkDeliveries } from '../support/order-checker.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { brokerDown, RecordingPublisher, transientFailure } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';

const fast = { pollIntervalMs: 20, maxPollIntervalMs: 50, errorBackoffMs: 20, leaseMs: 5000, publishTimeoutMs: 1000 };

describe('relay on PostgreSQL', () => {
  let fixture: PostgresFixture | undefined;
  const relays: Relay[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await fixture?.cleanup();
    fixture = undefined;
  });

  async function setup() {
    fixture = await createPostgresFixture();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const db = fromPgPool(fixture.pool);
    return { fixture, outbox, db };
  }

  it('publishes thousands of messages from concurrent writers through 3 relays: all once, in key order', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    publisher.delayMs = 1;
    for (let i = 0; i < 3; i++) {
      const relay = outbox.createRelay(publisher, { ...fast, batchSize: 50, owner: `relay-${i}` });
      relays.push(relay);
      relay.start();
    }
    const expected: { id: string; key: string | null }[] = [];
    const writers = Array.from({ length: 6 }, async (_, writer) => {
      for (let txn = 0; txn < 50; txn++) {
        const batch = Array.from({ length: 10 }, (_, i) => ({
          topic: 'orders.changed',
          type: 'order.changed',
          key: i % 5 === 4 ? undefined : `order-${writer}-${(txn + i) % 20}`,
          payload: { writer, txn, i },
        }));
        const ids = await db.transaction((tx) => outbox.enqueueMany(tx, batch));
        ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
      }
    });
    await Promise.all(writers);
    await waitFor(() => publisher.delivered.length >= expected.length, { timeoutMs: 60_000, what: 'all 3000 delivered' });
    await waitFor(
      async () => {
        const stats = await fixture.store.stats();
        return stats.pending === 0;
      },
      { what: 'marks to land' },
    );
    const report = checkDeliveries(
      expected,
      publisher.delivered.map((m) => m.id),
    );
    expect(report).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
    expect(publisher.keyOverlap).toBe(false);
    expect(await fixture.store.stats()).toMatchObject({ pending: 0, scheduled: 0, dead: 0 });
  });

  it('retries a failed publish with backoff, holding back only its own key', async () => {
    const { outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    const ids = await db.transaction((tx) =>
      outbox.enqueueMany(tx, [
        { topic: 't', type: 'x', key: 'stuck', payload: 1 },
        { topic: 't', type: 'x', key: 'stuck', payload: 2 },
        { topic: 't', type: 'x', key: 'free', payload: 3 },
      ]),
    );
    let failuresLeft = 2;
    publisher.failWith = (m) => (m.id === ids[0] && failuresLeft-- > 0 ? transientFailure(m.id) : undefined);
    const retries: number[] = [];
    const relay = outbox.createRelay(publisher, { ...fast, retry: { baseDelayMs: 50, maxDelayMs: 100 }, hooks: { onRetry: (e) => retries.push(e.attempts) } });
    relays.push(relay);
    relay.start();
    await waitFor(() => publisher.delivered.length === 3, { what: 'all three delivered' });
    expect(publisher.delivered.map((m) => m.id)).toEqual([ids[2], ids[0], ids[1]]);
    expect(retries).toEqual([1, 2]);
    expect(publisher.delivered[1]?.attempts).toBe(3);
  });

  it('parks a poison message as dead with its reason while other keys keep flowing', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    const poisonId = await db.transaction((tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: 'a', payload: 'poison' }));
    const others = await db.transaction((tx) =>
      outbox.enqueueMany(
        tx,
        Array.from({ length: 20 }, (_, i) => ({ topic: 't', type: 'x', key: `k${i % 4}`, payload: i })),
      ),
    );
    const after = await db.transaction((tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: 'a', payload: 'after' }));
    publisher.failWith = (m) =>
      m.id === poisonId ? new PublishError('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', `message ${m.id} too large (test)`, { permanent: true }) : undefined;
    const relay = outbox.createRelay(publisher, fast);
    relays.push(relay);
    relay.start();
    await waitFor(() => publisher.delivered.length === others.length + 1, { what: 'the healthy messages' });
    const dead = await waitFor(async () => (await fixture.store.listDead(10)).find((d) => d.id === poisonId), { what: 'poison parked' });
    expect(dead.reason).toContain('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect(dead.attempts).toBe(1);
    expect(publisher.delivered.map((m) => m.id)).toContain(after);
  });

  it('rides out a broker outage longer than the retry budget: nothing parked, the relay backs off as a whole', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    let down = true;
    let attemptsWhileDown = 0;
    publisher.failWith = (m) => (down ? (attemptsWhileDown++, brokerDown(m.id)) : undefined);
    const ids = await db.transaction((tx) =>
      outbox.enqueueMany(
        tx,
        Array.from({ length: 10 }, (_, i) => ({ topic: 't', type: 'x', key: `k${i % 2}`, payload: i })),
      ),
    );
    const relay = outbox.createRelay(publisher, {
      ...fast,
      errorBackoffMs: 50,
      maxErrorBackoffMs: 400,
      retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 },
    });
    relays.push(relay);
    relay.start();
    await waitFor(() => attemptsWhileDown >= 5, { what: 'several rounds against the dead broker' });
    for (let i = 0; i < 50; i++) outbox.notifyCommitted(); // wake-ups must not cut the backoff short
    const sample = attemptsWhileDown;
    expect(attemptsWhileDown - sample).toBeLessThanOrEqual(2);
    down = false;
    await waitFor(() => publisher.delivered.length === ids.length, { timeoutMs: 10_000, what: 'delivery once the broker is back' });
    expect(await fixture.store.listDead(10)).toEqual([]);
    expect(Math.max(...publisher.delivered.map((m) => m.attempts))).toBe(1);
  });

  it('parks a message after maxAttempts transient failures', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    publisher.failWith = (m) => transientFailure(m.id);
    const id = await db.transaction((tx) => outbox.enqueue(tx, { topic: 't', type: 'x', payload: {} }));
    const relay = outbox.createRelay(publisher, { ...fast, retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 3 } });
    relays.push(relay);
    relay.start();
    const dead = await waitFor(async () => (await fixture.store.listDead(10)).find((d) => d.id === id), { what: 'dead after 3 attempts' });
    expect(dead.attempts).toBe(3);
    expect(dead.reason).toContain('OUTBOXER_PUBLISH_FAILED');
  });

  it('stops gracefully: publishes in flight are confirmed and marked, the rest released for other relays', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    publisher.delayMs = 200;
    await db.transaction((tx) =>
      outbox.enqueueMany(
        tx,
        Array.from({ length: 6 }, (_, i) => ({ topic: 't', type: 'x', key: 'one-key', payload: i })),
      ),
    );
    const relay = outbox.createRelay(publisher, { ...fast, leaseMs: 60_000, publishTimeoutMs: 5000 });
    relay.start();
    await waitFor(() => publisher.inFlight > 0, { what: 'first publish in flight' });
    await relay.stop();
    expect(publisher.delivered).toHaveLength(1);
    expect(await fixture.store.stats()).toMatchObject({ pending: 5 });
    const next = outbox.createRelay(publisher, fast);
    relays.push(next);
    next.start();
    await waitFor(() => publisher.delivered.length === 6, { what: 'the released rest' });
  });

  it('recovers from database connections killed under it, losing nothing', async () => {
    const { fixture, db } = await setup();
    const appName = `relay_${fixture.schema}`;
    const relayPool = new pg.Pool({ connectionString: services.postgresUrl, max: 2, application_name: appName });
    relayPool.on('error', () => undefined);
    const relayOutbox = new Outbox<SqlExecutor>(new PostgresOutboxStore(fromPgPool(relayPool), { schema: fixture.schema }));
    const publisher = new RecordingPublisher();
    const relay = relayOutbox.createRelay(publisher, fast);
    relays.push(relay);
    relay.start();
    const ids: string[] = [];
    let killed = 0;
    try {
      for (let round = 0; round < 5; round++) {
        ids.push(
          ...(await db.transaction((tx) =>
            relayOutbox.enqueueMany(
              tx,
              Array.from({ length: 20 }, (_, i) => ({ topic: 't', type: 'x', key: `k${i % 3}`, payload: i })),
            ),
          )),
        );
        const result = await waitFor(
          async () => {
            const r = await fixture.pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [appName]);
            return r.rowCount !== null && r.rowCount > 0 ? r.rowCount : undefined;
          },
          { what: 'a relay connection to kill' },
        );
        killed += result;
      }
      await waitFor(() => new Set(publisher.delivered.map((m) => m.id)).size === ids.length, { timeoutMs: 30_000, what: 'all delivered after backend kills' });
      const report = checkDeliveries(
        ids.map((id, i) => ({ id, key: `k${(i % 20) % 3}` })),
        publisher.delivered.map((m) => m.id),
      );
      expect(killed).toBeGreaterThanOrEqual(5);
      expect(report.lost).toEqual([]);
      expect(report.orderInversions).toBe(0);
    } finally {
      await relay.stop();
      await relayPool.end();
    }
  });
});

describe('idempotent enqueue under concurrency', () => {
  it('lets exactly one of two concurrent transactions store a key; the other gets its id', async () => {
    const fixture = await createPostgresFixture();
    try {
      const outbox = new Outbox<SqlExecutor>(fixture.store);
      const a = await fixture.pool.connect();
      const b = await fixture.pool.connect();
      try {
        await a.query('BEGIN');
        await b.query('BEGIN');
        const firstId = await outbox.enqueue(a, { topic: 't', type: 'x', payload: 'a', idempotencyKey: 'same' });
        const blocked = outbox.enqueue(b, { topic: 't', type: 'x', payload: 'b', idempotencyKey: 'same' });
        await waitFor(
          async () => {
            const r = await fixture.pool.query(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%_idempotency%'",
            );
            return r.rows[0].n > 0;
          },
          { what: 'the second enqueue to wait on the first' },
        );
        await a.query('COMMIT');
        expect(await blocked).toBe(firstId);
        await b.query('COMMIT');
      } finally {
        a.release();
        b.release();
      }
      const rows = await fixture.pool.query(`SELECT payload FROM "${fixture.schema}".outbox`);
      expect(rows.rows.map((r) => r.payload)).toEqual(['a']);
    } finally {
      await fixture.cleanup();
    }
  });
});
