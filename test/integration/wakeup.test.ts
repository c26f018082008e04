import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { pgCommitNotifier, pgListenWakeSignal } from '../../src/stores/postgres/wakeup.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { services, uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

/** A relay that would otherwise poll only every 20 s, so a quick publish proves the wake-up worked. */
const sleepy = { pollIntervalMs: 20_000, maxPollIntervalMs: 20_000 };

describe('cross-process wake-up over LISTEN/NOTIFY', () => {
  let fixture: PostgresFixture | undefined;
  const relays: Relay[] = [];
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    for (const close of closers.splice(0).reverse()) await close();
    await fixture?.cleanup();
    fixture = undefined;
  });

  async function setup() {
    fixture = await createPostgresFixture();
    const channel = uniqueName('wake');
    const listenerName = `listener_${channel}`;
    // The "other process": its own pool, store and relay, woken only through PostgreSQL.
    const relayPool = new pg.Pool({ connectionString: services.postgresUrl, max: 2 });
    closers.push(() => relayPool.end());
    const relayOutbox = new Outbox<SqlExecutor>(new PostgresOutboxStore(fromPgPool(relayPool), { schema: fixture.schema }));
    const publisher = new RecordingPublisher();
    const wakeSignal = pgListenWakeSignal({
      channel,
      reconnectDelayMs: 50,
      connect: async () => {
        const client = new pg.Client({ connectionString: services.postgresUrl, application_name: listenerName, keepAlive: true });
        client.on('error', () => undefined);
        await client.connect();
        return client;
      },
    });
    const relay = relayOutbox.createRelay(publisher, { ...sleepy, wakeSignal });
    relays.push(relay);
    // The writer's process: notifies after its commits.
    const notifier = pgCommitNotifier(fromPgPool(fixture.pool), { channel });
    closers.push(() => notifier.close());
    const writer = new Outbox<SqlExecutor>(fixture.store, { commitNotifier: notifier });
    const db = fromPgPool(fixture.pool);
    const listening = async () =>
      Number((await fixture!.pool.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [listenerName])).rows[0].n) > 0;
    return { fixture, relay, publisher, writer, db, channel, listenerName, listening };
  }

  async function commitOne(writer: Outbox<SqlExecutor>, db: ReturnType<typeof fromPgPool>) {
    const id = await db.transaction((tx) => writer.enqueue(tx, { topic: 't', type: 'x', payload: {} }));
    writer.notifyCommitted();
    return { id, committedAt: performance.now() };
  }

  it('wakes a relay in another process right after a commit instead of at its next poll', async () => {
    const { relay, publisher, writer, db, listening } = await setup();
    relay.start();
    await waitFor(listening, { what: 'the LISTEN connection' });
    await waitFor(() => relay.running);
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { id, committedAt } = await commitOne(writer, db);
      await waitFor(() => publisher.delivered.some((m) => m.id === id), { timeoutMs: 10_000, intervalMs: 2, what: 'the woken relay to publish' });
      latencies.push(performance.now() - committedAt);
    }
    // Half the 20 s poll interval: only a wake-up publishes that soon, however loaded the machine is.
    expect(Math.max(...latencies)).toBeLessThan(10_000);
  });

  it('listens again after its connection is killed, and catches up on what it missed', async () => {
    const { fixture, relay, publisher, writer, db, listenerName, listening } = await setup();
    relay.start();
    await waitFor(listening, { what: 'the first LISTEN connection' });
    const killed = await fixture.pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [listenerName]);
    expect(killed.rowCount).toBe(1);
    const { id } = await commitOne(writer, db); // notified while nobody listens: only the reconnect can wake
    await waitFor(() => publisher.delivered.some((m) => m.id === id), { timeoutMs: 5000, what: 'the message committed during the outage' });
    await waitFor(listening, { what: 'the LISTEN connection back' });
    const again = await commitOne(writer, db);
    await waitFor(() => publisher.delivered.some((m) => m.id === again.id), { timeoutMs: 5000, what: 'a wake-up after the reconnect' });
  });

  it('coalesces a burst of commits into a few notifications', async () => {
    const { fixture, channel } = await setup();
    const counter = new pg.Client({ connectionString: services.postgresUrl });
    await counter.connect();
    closers.push(() => counter.end());
    let received = 0;
    counter.on('notification', () => received++);
    await counter.query(`LISTEN "${channel}"`);
    const notifier = pgCommitNotifier(fromPgPool(fixture.pool), { channel, coalesceMs: 20 });
    for (let i = 0; i < 200; i++) notifier.notify();
    await waitFor(() => received > 0, { what: 'the first notification' });
    await notifier.close();
    await counter.query('SELECT 1'); // notifications already sent arrive before this round trip ends
    expect(received).toBeGreaterThanOrEqual(1);
    expect(received).toBeLessThanOrEqual(2);
  });
});
