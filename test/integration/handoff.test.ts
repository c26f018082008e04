import { afterEach, describe, expect, it } from 'vitest';
import type { OutboxMessageInput } from '../../src/core/message.js';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { countingClaims } from '../support/counting-store.js';
import { checkDeliveries } from '../support/order-checker.js';
import { createV1PostgresFixture } from '../support/engine-v1-table.js';
import type { PostgresFixture } from '../support/postgres-fixture.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';

const sleepy = { pollIntervalMs: 30_000, maxPollIntervalMs: 30_000, leaseMs: 10_000, publishTimeoutMs: 2000 };

// The hand-off is engine v1's: a v1 table, and relays asked for engine v1.
describe('in-process hand-off (Outbox.transaction, engine v1)', () => {
  let fixture: PostgresFixture | undefined;
  const relays: Relay[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await fixture?.cleanup();
    fixture = undefined;
  });

  async function setup(relayOptions: Record<string, unknown> = sleepy, outboxOptions: { maxConcurrentHandoffs?: number } = {}) {
    fixture = await createV1PostgresFixture();
    const counted = countingClaims(fixture.store);
    const outbox = new Outbox<SqlExecutor>(counted.store, outboxOptions);
    const publisher = new RecordingPublisher();
    const relay = outbox.createRelay(publisher, { engine: 'v1', ...relayOptions });
    relays.push(relay);
    relay.start();
    await waitFor(() => counted.claims() >= 1, { what: 'the first claim at start' });
    return { fixture, outbox, publisher, relay, db: fromPgPool(fixture.pool), claims: counted.claims, claimedIds: counted.claimedIds };
  }

  it('publishes right after the commit without a claim query', async () => {
    const { fixture, outbox, publisher, db, claims } = await setup();
    const before = claims();
    const started = performance.now();
    const ids = await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(tx, [
        { topic: 't', type: 'x', key: 'a', payload: 1 },
        { topic: 't', type: 'x', key: 'a', payload: 2 },
        { topic: 't', type: 'x', payload: 3 },
      ]),
    );
    await waitFor(() => publisher.delivered.length === 3, { timeoutMs: 5000, intervalMs: 1, what: 'the hand-off' });
    const elapsed = performance.now() - started;
    expect(publisher.delivered.filter((m) => m.key === 'a').map((m) => m.id)).toEqual(ids.slice(0, 2));
    expect(claims()).toBe(before);
    expect(elapsed).toBeLessThan(10_000); // not a poll or a lease expiry; the claim count above is the proof
    await waitFor(async () => (await fixture.store.stats()).inFlight === 0, { what: 'marks' });
    expect(await fixture.store.stats()).toMatchObject({ pending: 0, dead: 0 });
  });

  it('hands nothing over when the transaction rolls back', async () => {
    const { fixture, outbox, publisher, db } = await setup();
    await expect(
      outbox.transaction(db, async (tx) => {
        await outbox.enqueue(tx, { topic: 't', type: 'x', payload: 1 });
        throw new Error('declined');
      }),
    ).rejects.toThrow('declined');
    expect(await fixture.store.stats()).toMatchObject({ pending: 0, inFlight: 0 });
    expect(publisher.delivered).toEqual([]);
  });

  it('leaves a message whose key is busy to the claim path, after the earlier one', async () => {
    const { fixture, outbox, publisher, db, relay } = await setup();
    const other = new Outbox<SqlExecutor>(fixture.store);
    const earlier = await db.transaction((tx) => other.enqueue(tx, { topic: 't', type: 'x', key: 'busy', payload: 'earlier' }));
    const held = await fixture.store.claim({ owner: 'elsewhere', leaseMs: 60_000, limit: 10 });
    expect(held.messages.map((m) => m.id)).toEqual([earlier]);
    const later = await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: 'busy', payload: 'later' }));
    const row = await fixture.pool.query(`SELECT lease_token FROM "${fixture.schema}".outbox WHERE id = $1`, [later]);
    expect(row.rows[0].lease_token).toBeNull();
    expect(publisher.delivered).toEqual([]);
    await fixture.store.release(held.token, [earlier]);
    relay.wake();
    await waitFor(() => publisher.delivered.length === 2, { what: 'both, through the claim path' });
    expect(publisher.delivered.map((m) => m.id)).toEqual([earlier, later]);
  });

  it('takes the claim path for transactions beyond maxConcurrentHandoffs open at once', async () => {
    const { outbox, publisher, db, claims, claimedIds } = await setup(sleepy, { maxConcurrentHandoffs: 1 });
    let enqueued = () => {};
    const firstEnqueued = new Promise<void>((resolve) => {
      enqueued = resolve;
    });
    let releaseFirst = () => {};
    const firstMayCommit = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const first = outbox.transaction(db, async (tx) => {
      const id = await outbox.enqueue(tx, { topic: 't', type: 'x', key: 'a', payload: 1 });
      enqueued();
      await firstMayCommit;
      return id;
    });
    await firstEnqueued;
    const before = claims();
    // Opened while the first is still open: over the limit of 1, so it is not handed off but claimed.
    const second = await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: 'b', payload: 2 }));
    await waitFor(() => publisher.delivered.some((m) => m.id === second), { what: 'the second, through a claim' });
    expect(claims()).toBeGreaterThan(before);
    expect(claimedIds().has(second)).toBe(true);
    releaseFirst();
    const firstId = await first;
    await waitFor(() => publisher.delivered.some((m) => m.id === firstId), { what: 'the first, handed off' });
    expect(claimedIds().has(firstId)).toBe(false);
    expect(() => new Outbox(outbox.store, { maxConcurrentHandoffs: -1 })).toThrow(/maxConcurrentHandoffs/);
  });

  it('stops handing off while maxHandoff messages are unfinished (a slow broker)', async () => {
    const { outbox, publisher, db, claims } = await setup({ ...sleepy, maxHandoff: 1 });
    publisher.holdConfirms();
    const first = await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: 'a', payload: 1 }));
    const before = claims();
    const second = await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: 'b', payload: 2 }));
    // The first is still unconfirmed, so the second went the claim path (a wake-up and a claim).
    await waitFor(() => claims() > before, { what: 'a claim for the second' });
    publisher.releaseConfirms();
    await waitFor(() => [first, second].every((id) => publisher.delivered.some((m) => m.id === id)), { what: 'both, once confirmed' });
  });

  it('falls back to the claim path when no relay runs in this process', async () => {
    fixture = await createV1PostgresFixture();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const db = fromPgPool(fixture.pool);
    await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', payload: 1 }));
    expect(await fixture.store.stats()).toMatchObject({ pending: 1, inFlight: 0 });
  });

  it('does not publish a hand-off whose lease ran short; the claim path takes it over', async () => {
    const { fixture, outbox, publisher, db } = await setup({ pollIntervalMs: 20, maxPollIntervalMs: 50, leaseMs: 2000, publishTimeoutMs: 500 });
    const started = performance.now();
    const id = await outbox.transaction(db, async (tx) => {
      const enqueued = await outbox.enqueue(tx, { topic: 't', type: 'x', payload: 'slow transaction' });
      // The fault under test: a transaction that stays open past the hand-off's publish deadline (1.1 s).
      await new Promise((resolve) => setTimeout(resolve, 1300));
      return enqueued;
    });
    await waitFor(() => publisher.delivered.some((m) => m.id === id), { timeoutMs: 10_000, what: 'delivery after the lease ends' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(1300);
    expect(publisher.delivered.filter((m) => m.id === id)).toHaveLength(1);
    await waitFor(async () => (await fixture.store.stats()).inFlight === 0, { what: 'marks' });
  });

  it('carries thousands of messages from writers that serialize on their aggregates: key order kept, none lost or twice', async () => {
    const { fixture, outbox, publisher, db } = await setup({ pollIntervalMs: 20, maxPollIntervalMs: 100, leaseMs: 10_000, publishTimeoutMs: 2000 });
    const aggregates = `"${fixture.schema}".aggregates`;
    await fixture.pool.query(`CREATE TABLE ${aggregates} (key text PRIMARY KEY, version int NOT NULL)`);
    await fixture.pool.query(`INSERT INTO ${aggregates} SELECT 'k' || n, 0 FROM generate_series(0, 11) n`);
    const written: { id: string; key: string | null; version: number; order: number }[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async (_, writer) => {
        for (let txn = 0; txn < 60; txn++) {
          const keys = [...new Set(Array.from({ length: 4 }, (_, i) => `k${(writer * 3 + txn + i) % 12}`))].sort();
          await outbox.transaction(db, async (tx) => {
            // Lock the aggregates and bump their versions, as a service does around its events.
            await tx.query(`SELECT key FROM ${aggregates} WHERE key = ANY($1) ORDER BY key FOR UPDATE`, [keys]);
            const bumped = await tx.query(`UPDATE ${aggregates} SET version = version + 1 WHERE key = ANY($1) RETURNING key, version`, [keys]);
            const versionOf = new Map((bumped.rows as { key: string; version: number }[]).map((r) => [r.key, r.version]));
            const batch: OutboxMessageInput[] = [...keys.map((key) => ({ topic: 't', type: 'x', key, payload: { writer, txn } })), { topic: 't', type: 'x', payload: { writer, txn } }];
            const ids = await outbox.enqueueMany(tx, batch);
            ids.forEach((id, i) => {
              const key = batch[i]?.key ?? null;
              written.push({ id, key, version: key === null ? 0 : (versionOf.get(key) ?? 0), order: written.length });
            });
          });
        }
      }),
    );
    const expected = [...written].sort((a, b) => a.version - b.version || a.order - b.order);
    await waitFor(() => new Set(publisher.delivered.map((m) => m.id)).size >= expected.length, { timeoutMs: 30_000, what: 'all delivered' });
    await waitFor(async () => (await fixture.store.stats()).inFlight === 0, { what: 'marks' });
    expect(checkDeliveries(expected, publisher.delivered.map((m) => m.id))).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
    expect(publisher.keyOverlap).toBe(false);
    expect(await fixture.store.stats()).toMatchObject({ pending: 0, scheduled: 0, dead: 0 });
  });
});
