import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { createV1PostgresFixture } from '../support/engine-v1-table.js';
import type { PostgresFixture } from '../support/postgres-fixture.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';

/** SIGTERM arrives while a request is inside outbox.transaction: its message is leased to the in-process relay. */
describe('outbox.close() with a hand-off transaction still open (engine v1)', () => {
  let fixture: PostgresFixture | undefined;
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });

  it('lets it commit and hand its message over, publishes it, and only then stops the relay: nothing stays leased', async () => {
    fixture = await createV1PostgresFixture();
    const db = fromPgPool(fixture.pool);
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const publisher = new RecordingPublisher();
    outbox.createRelay(publisher, { engine: 'v1', pollIntervalMs: 60_000, maxPollIntervalMs: 60_000 }).start();
    let enqueued = false;
    let finish: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const request = outbox.transaction(db, async (tx) => {
      const id = await outbox.enqueue(tx, { topic: 't', type: 'x', key: 'k', payload: 1 });
      enqueued = true;
      await gate;
      return id;
    });
    await waitFor(() => enqueued, { what: 'the enqueue inside the open transaction' });
    const closed = outbox.close();
    finish();
    const id = await request;
    await closed;
    expect(publisher.delivered.map((message) => message.id)).toEqual([id]);
    const rows = await fixture.pool.query(`SELECT count(*)::int AS n FROM "${fixture.schema}".outbox WHERE lease_until > now()`);
    expect(rows.rows[0].n).toBe(0);
    const stats = await fixture.store.stats();
    expect(stats.pending + stats.inFlight).toBe(0);
  });
});
