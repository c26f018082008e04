import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { checkDeliveries } from '../support/order-checker.js';
import { FreezableStore, holdings, relayPool } from '../support/partition-relay-fixture.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { RecordingPublisher, transientFailure } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';

describe('engine v2 relays sharing partitions on PostgreSQL', () => {
  let fixture: PostgresFixture | undefined;
  const relays = relayPool();
  afterEach(async () => {
    await relays.stopAll();
    await fixture?.cleanup();
    fixture = undefined;
  });

  async function setup() {
    fixture = await createPostgresFixture();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const db = fromPgPool(fixture.pool);
    const expected: { id: string; key: string | null }[] = [];
    let n = 0;
    const enqueue = async (count: number) => {
      const batch = Array.from({ length: count }, () => ({ topic: 't', type: 'x', key: `k${n % 12}`, payload: n++ }));
      const ids = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, batch));
      ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
      return ids;
    };
    return { fixture, enqueue, expected };
  }

  it('split the partitions fairly; one leaves and one is killed; the survivor holds all within about a lease, nothing lost', async () => {
    const { fixture, enqueue, expected } = await setup();
    const publisher = new RecordingPublisher();
    const killed = new FreezableStore(fixture.store);
    const a = relays.make(fixture.store, publisher);
    const b = relays.make(fixture.store, publisher);
    const c = relays.make(killed.store, publisher);
    await waitFor(
      async () => {
        const held = await holdings(fixture);
        return held.size === 3 && [...held.values()].every((n) => n === 21 || n === 22) && [...held.values()].reduce((s, n) => s + n, 0) === 64;
      },
      { what: 'three fair shares of 64 (22, 21, 21)' },
    );
    await enqueue(120);
    await waitFor(() => publisher.delivered.length >= 120, { what: 'the first messages, published by all three' });

    await a.stop();
    await waitFor(
      async () => {
        const held = await holdings(fixture);
        return held.get(b.relayId as string) === 32 && held.get(c.relayId as string) === 32;
      },
      { what: 'the two left holding 32 each after one left' },
    );
    await enqueue(120);

    killed.freeze();
    const survivor = b.relayId as string;
    await waitFor(async () => (await holdings(fixture)).get(survivor) === 64, { timeoutMs: 15_000, what: 'the survivor holding all 64 after the kill' });
    expect(b.partitions).toHaveLength(64);
    await enqueue(120);
    await waitFor(() => new Set(publisher.delivered.map((m) => m.id)).size >= expected.length, { what: 'every message' });
    const report = checkDeliveries(
      expected,
      publisher.delivered.map((m) => m.id),
    );
    expect(report.lost).toEqual([]);
    expect(report.phantom).toEqual([]);
    expect(report.orderInversions).toBe(0);
  });

  it('a relay whose beats come back too late stands by and gives its partitions back, then rejoins as a new relay', async () => {
    const { fixture, enqueue, expected } = await setup();
    const publisher = new RecordingPublisher();
    const slow = new FreezableStore(fixture.store);
    const lease: string[] = [];
    const a = relays.make(slow.store, publisher, { hooks: { onError: (e) => lease.push(e.stage) } });
    await waitFor(() => a.partitions.length === 64, { what: 'the first relay holding everything' });
    const b = relays.make(fixture.store, publisher);
    await waitFor(async () => (await holdings(fixture)).get(b.relayId as string) === 32, { what: 'a fair split' });
    const lapsed = a.relayId as string;
    // its beats still reach the database (its row stays alive) but their replies come back after 0.8 of the lease
    slow.slowBeatsMs = 2500;
    await waitFor(() => a.partitions.length === 0 && lease.includes('lease'), { what: 'the lapse: every partition dropped' });
    await waitFor(async () => (await holdings(fixture)).get(b.relayId as string) === 64, { what: 'the partitions given back and taken by the other relay' });
    const row = await fixture.pool.query(`SELECT leaving FROM "${fixture.schema}".outbox_relays WHERE relay_id = $1 AND expires_at > now()`, [lapsed]);
    expect(row.rows).toEqual([{ leaving: true }]);
    await enqueue(60);
    slow.slowBeatsMs = 0;
    await waitFor(() => a.relayId !== undefined && a.relayId !== lapsed && a.partitions.length === 32, {
      timeoutMs: 15_000,
      what: 'the relay back under a new id with its share',
    });
    await enqueue(60);
    await waitFor(() => new Set(publisher.delivered.map((m) => m.id)).size >= expected.length, { what: 'every message' });
    expect(
      checkDeliveries(
        expected,
        publisher.delivered.map((m) => m.id),
      ),
    ).toMatchObject({ lost: [], phantom: [], orderInversions: 0 });
  });

  it("fences a zombie's completion: a relay paused past its lease writes nothing for partitions granted to another", async () => {
    const { fixture, enqueue } = await setup();
    const zombiePublisher = new RecordingPublisher();
    const zombie = new FreezableStore(fixture.store);
    const fenced: { expected: number; marked: number }[] = [];
    const z = relays.make(zombie.store, zombiePublisher, { leaseMs: 6000, publishTimeoutMs: 1000, hooks: { onFenced: (e) => fenced.push(e) } });
    await waitFor(() => z.partitions.length === 64, { what: 'the first relay holding everything' });
    zombie.gateCompletions();
    const [id] = await enqueue(1);
    await waitFor(() => zombiePublisher.delivered.length === 1 && zombie.gated > 0, { what: 'the publish, its completion held back' });
    // the pause outlives the lease: the database expires the zombie, and a new relay takes its partitions
    await fixture.pool.query(`UPDATE "${fixture.schema}".outbox_relays SET expires_at = now() - interval '1 second' WHERE relay_id = $1`, [z.relayId]);
    const heir = new RecordingPublisher();
    const h = relays.make(fixture.store, heir);
    await waitFor(() => heir.delivered.some((m) => m.id === id), { what: 'the new owner publishing the message again' });
    await waitFor(async () => (await fixture.pool.query(`SELECT 1 FROM "${fixture.schema}".outbox WHERE id = $1`, [id])).rowCount === 0, {
      what: "the new owner's completion",
    });
    zombie.openGate();
    await waitFor(() => fenced.length > 0, { what: "the zombie's completion fenced" });
    expect(fenced[0]).toEqual({ expected: 1, marked: 0 });
    expect(h.relayId).toBeDefined();
  });

  it('a completion that committed but lost its reply is tried again without counting its failure twice', async () => {
    const { fixture, enqueue } = await setup();
    const publisher = new RecordingPublisher();
    const lossy = new FreezableStore(fixture.store);
    lossy.repliesLostAfterCommit = 1;
    const [failing] = await enqueue(1);
    publisher.failWith = (m) => (m.id === failing ? transientFailure(m.id) : undefined);
    const errors: string[] = [];
    let reported = 0;
    const hooks = { onError: (e: { stage: string }) => errors.push(e.stage), onRetry: () => reported++ };
    relays.make(lossy.store, publisher, { retry: { baseDelayMs: 600_000, maxDelayMs: 600_000, jitter: 0 }, hooks });
    // the outcome is reported once the completion went through: after the lost reply and the second try
    await waitFor(() => reported === 1, { what: 'the completion done' });
    expect(errors).toContain('mark');
    expect(lossy.repliesLostAfterCommit).toBe(0);
    const row = await fixture.pool.query(`SELECT attempts FROM "${fixture.schema}".outbox WHERE id = $1`, [failing]);
    expect(row.rows).toEqual([{ attempts: 1 }]); // counted by the try that committed, not again by the next
  });
});
