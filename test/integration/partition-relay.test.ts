import { afterEach, describe, expect, it, vi } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import type { RelayOptionsInput } from '../../src/core/relay-options.js';
import { fromPgPool, type PgDatabase, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { checkDeliveries } from '../support/order-checker.js';
import { v2Timing } from '../support/partition-relay-fixture.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { brokerDown, RecordingPublisher, transientFailure } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';

describe('engine v2 relay on PostgreSQL', () => {
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
    return { fixture, outbox, db: fromPgPool(fixture.pool) };
  }

  const pendingRows = async (f: PostgresFixture) =>
    (await f.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${f.schema}".outbox WHERE state = 'pending'`)).rows[0]?.n;

  /** `n` keys whose partitions differ from key k0's, so that no later row waits for the first batch's partition. */
  const keysBesideK0 = async (f: PostgresFixture, n: number) =>
    (
      await f.pool.query<{ key: string }>(
        `SELECT 'k' || g AS key FROM generate_series(1, 40) g
          WHERE "${f.schema}".outboxer_partition('k' || g, NULL, 64) <> "${f.schema}".outboxer_partition('k0', NULL, 64) LIMIT ${n}`,
      )
    ).rows.map((r) => r.key);

  /** A relay over `publisher` with `options`, started, and a function that commits one message of a key. */
  function started(outbox: Outbox<SqlExecutor>, db: PgDatabase, publisher: RecordingPublisher, options: RelayOptionsInput) {
    const relay = outbox.createRelay(publisher, { ...v2Timing, ...options });
    relays.push(relay);
    relay.start();
    return (key: string) => outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key, payload: {} }));
  }

  it('names the partition count it read with in every completion, so the store can probe by partition and seq', async () => {
    const { fixture, outbox, db } = await setup();
    const complete = vi.spyOn(fixture.store.reader, 'complete');
    const publisher = new RecordingPublisher();
    const relay = outbox.createRelay(publisher, v2Timing);
    relays.push(relay);
    relay.start();
    await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(tx, [
        { topic: 't', type: 'x', key: 'a', payload: {} },
        { topic: 't', type: 'x', payload: {} },
      ]),
    );
    await waitFor(async () => (await pendingRows(fixture)) === 0, { what: 'both published and completed' });
    expect(complete.mock.calls.length).toBeGreaterThan(0);
    expect(complete.mock.calls.map((call) => call[2])).toEqual(complete.mock.calls.map(() => ({ partitionCount: 64 })));
  });

  it('without a backlog one batch publishes at a time: what commits meanwhile is read together once its publishes end', async () => {
    const { fixture, outbox, db } = await setup();
    const keys = await keysBesideK0(fixture, 9);
    const reads: number[] = [];
    const read = fixture.store.reader.read.bind(fixture.store.reader);
    vi.spyOn(fixture.store.reader, 'read').mockImplementation(async (...args) => {
      const result = await read(...args);
      if (result.messages.length > 0) reads.push(result.messages.length);
      return result;
    });
    const publisher = new RecordingPublisher();
    publisher.holdConfirms();
    // a publish timeout, and a poll interval (after which a batch in flight counts as slow and the other lanes open),
    // that a slow machine's nine commits cannot reach while the first confirm is held
    const enqueue = started(outbox, db, publisher, { leaseMs: 30_000, publishTimeoutMs: 10_000, pollIntervalMs: 10_000, maxPollIntervalMs: 10_000 });
    await enqueue('k0');
    await waitFor(() => publisher.inFlight === 1, { what: 'the first batch publishing, its confirm held' });
    // each commit wakes the relay; with three lanes free it used to read and publish each one alone
    for (const key of keys) await enqueue(key);
    publisher.releaseConfirms();
    await waitFor(async () => (await pendingRows(fixture)) === 0, { what: 'all ten published and completed' });
    expect(keys).toHaveLength(9);
    expect(reads).toEqual([1, 9]);
  });

  it('a batch publishing longer than a poll interval gives the other lanes back: a row of another partition publishes beside it', async () => {
    const { fixture, outbox, db } = await setup();
    const [other = 'k1'] = await keysBesideK0(fixture, 1);
    const publisher = new RecordingPublisher();
    publisher.holdConfirms();
    // the first confirm stays held far beyond the wait below: only the give-back lets the second batch publish
    const enqueue = started(outbox, db, publisher, { leaseMs: 60_000, publishTimeoutMs: 20_000, pollIntervalMs: 200, maxPollIntervalMs: 200 });
    await enqueue('k0');
    await waitFor(() => publisher.inFlight === 1, { what: 'the first batch publishing, its confirm held' });
    await enqueue(other);
    await waitFor(() => publisher.inFlight === 2, { timeoutMs: 10_000, what: 'the second batch publishing beside the held one' });
    publisher.releaseConfirms();
    await waitFor(async () => (await pendingRows(fixture)) === 0, { what: 'both published and completed' });
    expect(publisher.delivered.map((m) => m.key).sort()).toEqual(['k0', other].sort());
  });

  it('publishes what concurrent writers commit through outbox.transaction: all once, in key order, rows deleted', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    const relay = outbox.createRelay(publisher, { ...v2Timing, batchSize: 64 });
    relays.push(relay);
    relay.start();
    const expected: { id: string; key: string | null }[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, writer) => {
        for (let txn = 0; txn < 25; txn++) {
          const batch = Array.from({ length: 8 }, (_, i) => ({
            topic: 't',
            type: 'x',
            key: i === 7 ? undefined : `k-${writer}-${(txn + i) % 6}`,
            payload: { writer, txn, i },
          }));
          const ids = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, batch));
          ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
        }
      }),
    );
    await waitFor(() => publisher.delivered.length >= expected.length, { timeoutMs: 30_000, what: 'all 800 delivered' });
    await waitFor(async () => (await pendingRows(fixture)) === 0, { what: 'completions to land' });
    expect(
      checkDeliveries(
        expected,
        publisher.delivered.map((m) => m.id),
      ),
    ).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
    expect(publisher.keyOverlap).toBe(false);
    expect((await fixture.pool.query(`SELECT count(*)::int AS n FROM "${fixture.schema}".outbox`)).rows[0]).toEqual({ n: 0 });
  });

  it('publishes a row that commits late, below the position reads have passed', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    const relay = outbox.createRelay(publisher, v2Timing);
    relays.push(relay);
    relay.start();
    const late = await fixture.pool.connect();
    try {
      await late.query('BEGIN');
      const lateId = await outbox.enqueue(late, { topic: 't', type: 'x', key: 'late', payload: 'late' });
      // rows of other keys in the late row's partition, committed first: the partition's position passes the late row
      const sameKeys = await fixture.pool.query<{ key: string }>(
        `SELECT 'k' || n AS key FROM generate_series(1, 2000) n
         WHERE "${fixture.schema}".outboxer_partition('k' || n, NULL, 64) = "${fixture.schema}".outboxer_partition('late', NULL, 64) LIMIT 5`,
      );
      expect(sameKeys.rows).toHaveLength(5);
      const later = await outbox.transaction(db, (tx) =>
        outbox.enqueueMany(
          tx,
          sameKeys.rows.map(({ key }, i) => ({ topic: 't', type: 'x', key, payload: i })),
        ),
      );
      await waitFor(() => later.every((id) => publisher.delivered.some((m) => m.id === id)), { what: 'the rows committed first' });
      await late.query('COMMIT');
      outbox.notifyCommitted();
      await waitFor(() => publisher.delivered.some((m) => m.id === lateId), { what: 'the late row' });
    } finally {
      late.release();
    }
    expect(publisher.delivered.length).toBe(6);
  });

  it('keeps key order when a message commits late below the position and a later one of its key follows before the range settles', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    const relay = outbox.createRelay(publisher, v2Timing);
    relays.push(relay);
    relay.start();
    const [other] = (
      await fixture.pool.query<{ key: string }>(
        `SELECT 'o' || n AS key FROM generate_series(1, 2000) n
       WHERE "${fixture.schema}".outboxer_partition('o' || n, NULL, 64) = "${fixture.schema}".outboxer_partition('k', NULL, 64) LIMIT 1`,
      )
    ).rows;
    const open = await fixture.pool.connect();
    const late = await fixture.pool.connect();
    try {
      // a writing transaction that stays open keeps the horizon below the tag of every read after it
      await open.query('BEGIN');
      await open.query('SELECT pg_current_xact_id()');
      await late.query('BEGIN');
      const first = await outbox.enqueue(late, { topic: 't', type: 'x', key: 'k', payload: 'first' });
      const passed = await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: other?.key, payload: 'passes it' }));
      await waitFor(() => publisher.delivered.some((m) => m.id === passed), { what: 'a row above it, so the position passes it' });
      await late.query('COMMIT');
      const second = await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: 'k', payload: 'second' }));
      await waitFor(() => publisher.delivered.some((m) => m.id === second), { what: 'the later message of the key' });
      await open.query('COMMIT');
      await waitFor(() => publisher.delivered.some((m) => m.id === first), { what: 'the late message' });
      const order = publisher.delivered.map((m) => m.id);
      expect(order.indexOf(first)).toBeLessThan(order.indexOf(second));
    } finally {
      open.release();
      late.release();
    }
  });

  it('writes nothing while the broker is unavailable, keeps its partitions, and publishes everything after', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    publisher.failWith = (m) => brokerDown(m.id);
    const errors: string[] = [];
    const relay = outbox.createRelay(publisher, { ...v2Timing, hooks: { onError: (e) => errors.push(e.stage) } });
    relays.push(relay);
    relay.start();
    const expected = (
      await outbox.transaction(db, (tx) =>
        outbox.enqueueMany(
          tx,
          Array.from({ length: 30 }, (_, i) => ({ topic: 't', type: 'x', key: `k${i % 4}`, payload: i })),
        ),
      )
    ).map((id, i) => ({ id, key: `k${i % 4}` }));
    await waitFor(() => errors.filter((s) => s === 'publish').length >= 3, { what: 'several rounds against the broker that is down' });
    const touched = await fixture.pool.query(
      `SELECT count(*)::int AS n FROM "${fixture.schema}".outbox WHERE attempts > 0 OR due_at IS NOT NULL OR last_error IS NOT NULL`,
    );
    expect(touched.rows[0]).toEqual({ n: 0 });
    expect(relay.partitions).toHaveLength(64);
    publisher.failWith = () => undefined;
    await waitFor(() => publisher.delivered.length >= 30, { what: 'everything once the broker is back' });
    expect(
      checkDeliveries(
        expected,
        publisher.delivered.map((m) => m.id),
      ),
    ).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
  });

  it('holds only the key of a failing message, and a new owner respects the hold', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    const options = { ...v2Timing, retry: { baseDelayMs: 600_000, maxDelayMs: 600_000, jitter: 0 } };
    const first = outbox.createRelay(publisher, options);
    relays.push(first);
    first.start();
    const [failing] = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, [{ topic: 't', type: 'x', key: 'k', payload: 'fails' }]));
    publisher.failWith = (m) => (m.id === failing ? transientFailure(m.id) : undefined);
    await waitFor(
      async () =>
        (await fixture.pool.query(`SELECT 1 FROM "${fixture.schema}".outbox WHERE id = $1 AND attempts = 1 AND due_at IS NOT NULL`, [failing])).rowCount === 1,
      { what: 'the failure scheduled' },
    );
    await first.stop();
    const [behind, ...others] = await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(tx, [
        { topic: 't', type: 'x', key: 'k', payload: 'behind' },
        ...Array.from({ length: 20 }, (_, i) => ({ topic: 't', type: 'x', key: `o${i}`, payload: i })),
      ]),
    );
    const second = outbox.createRelay(publisher, options);
    relays.push(second);
    second.start();
    await waitFor(() => others.every((id) => publisher.delivered.some((m) => m.id === id)), { what: 'the other keys' });
    await waitFor(
      async () =>
        (await fixture.pool.query(`SELECT 1 FROM "${fixture.schema}".outbox WHERE id = $1 AND due_at IS NOT NULL AND attempts = 0`, [behind])).rowCount === 1,
      { what: 'the hold on the later message of the key' },
    );
    expect(publisher.delivered.map((m) => m.id)).not.toContain(behind);
    publisher.failWith = () => undefined;
    await fixture.pool.query(`UPDATE "${fixture.schema}".outbox SET due_at = now() - interval '1 second' WHERE due_at IS NOT NULL`);
    await waitFor(() => publisher.delivered.some((m) => m.id === behind), { what: 'the key once its failure is due' });
    const order = publisher.delivered.map((m) => m.id);
    expect(order.indexOf(failing as string)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(failing as string)).toBeLessThan(order.indexOf(behind as string));
  });

  it('publishes a partition whose owners kept dying one row at a time, each after a counted attempt, until it makes progress', async () => {
    const { fixture, outbox, db } = await setup();
    const partitionOfU1 = `"${fixture.schema}".outboxer_partition('u1', NULL, 64)`;
    const keys = (
      await fixture.pool.query<{ key: string }>(
        `SELECT 'u' || n AS key FROM generate_series(1, 5000) n WHERE "${fixture.schema}".outboxer_partition('u' || n, NULL, 64) = ${partitionOfU1} LIMIT 4`,
      )
    ).rows.map((row) => row.key);
    await fixture.pool.query(`UPDATE "${fixture.schema}".outbox_partitions SET unclean = 3 WHERE partition = ${partitionOfU1}`);
    const publisher = new RecordingPublisher();
    const ids = await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(
        tx,
        keys.map((key, i) => ({ topic: 't', type: 'x', key, payload: i })),
      ),
    );
    const failing = ids[0] as string;
    publisher.failWith = (m) => (m.id === failing ? transientFailure(m.id) : undefined);
    publisher.holdConfirms();
    const relay = outbox.createRelay(publisher, { ...v2Timing, retry: { baseDelayMs: 600_000, maxDelayMs: 600_000, jitter: 0 } });
    relays.push(relay);
    relay.start();
    const attemptsOf = async (id: string) =>
      (await fixture.pool.query(`SELECT attempts FROM "${fixture.schema}".outbox WHERE id = $1`, [id])).rows[0]?.attempts as number;
    await waitFor(() => publisher.inFlight > 0, { what: 'the first publish' });
    expect(await attemptsOf(failing)).toBe(1); // counted before the publish
    expect(publisher.inFlight).toBe(1); // alone, though four keys wait
    publisher.releaseConfirms();
    await waitFor(() => publisher.delivered.length === 3, { what: 'the three that succeed' });
    await waitFor(async () => (await pendingRows(fixture)) === 1, { what: 'their completions' });
    const row = await fixture.pool.query(`SELECT attempts, due_at IS NOT NULL AS scheduled, last_error FROM "${fixture.schema}".outbox WHERE id = $1`, [
      failing,
    ]);
    expect(row.rows).toEqual([{ attempts: 1, scheduled: true, last_error: expect.stringContaining('nacked') as string }]); // not counted twice
    const unclean = await fixture.pool.query(`SELECT unclean FROM "${fixture.schema}".outbox_partitions WHERE partition = ${partitionOfU1}`);
    expect(unclean.rows).toEqual([{ unclean: 0 }]); // the first success was progress
  });

  it('pauses a topic whose destination is missing: its rows held uncounted, other topics flowing, then resumed', async () => {
    const { fixture, outbox, db } = await setup();
    const publisher = new RecordingPublisher();
    let routable = false;
    publisher.failWith = (m) => (m.topic === 'gone' && !routable ? new PublishError('OUTBOXER_UNROUTABLE', `no route for message ${m.id} (test)`) : undefined);
    const events: string[] = [];
    const relay = outbox.createRelay(publisher, {
      ...v2Timing,
      hooks: { onTopicPaused: (e) => events.push(`paused ${e.topic}`), onTopicResumed: (e) => events.push(`resumed ${e.topic}`) },
    });
    relays.push(relay);
    relay.start();
    const gone = await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(
        tx,
        Array.from({ length: 3 }, (_, i) => ({ topic: 'gone', type: 'x', key: 'g', payload: i })),
      ),
    );
    const flowing = await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(
        tx,
        Array.from({ length: 5 }, (_, i) => ({ topic: 'ok', type: 'x', key: `k${i}`, payload: i })),
      ),
    );
    await waitFor(() => flowing.every((id) => publisher.delivered.some((m) => m.id === id)), { what: 'the other topic' });
    await waitFor(
      async () =>
        (await fixture.pool.query(`SELECT count(*)::int AS n FROM "${fixture.schema}".outbox WHERE topic = 'gone' AND due_at IS NOT NULL AND attempts = 0`))
          .rows[0]?.n === 3,
      { what: 'the paused topic held, uncounted' },
    );
    expect(events).toEqual(['paused gone']);
    routable = true;
    await waitFor(() => gone.every((id) => publisher.delivered.some((m) => m.id === id)), { timeoutMs: 20_000, what: 'the topic after its pause' });
    expect(publisher.delivered.filter((m) => m.topic === 'gone').map((m) => m.id)).toEqual(gone);
    await waitFor(() => events.length === 2, { what: 'the resume reported' });
    expect(events).toEqual(['paused gone', 'resumed gone']);
  });
});
