import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { relayPool } from '../support/partition-relay-fixture.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { RecordingPublisher, transientFailure } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';

/** A retry is tried again at the time the log states (`retryInMs`), not at the next poll after it. */
describe('retry times the relay keeps', () => {
  let fixture: PostgresFixture | undefined;
  const relays = relayPool();
  afterEach(async () => {
    await relays.stopAll();
    await fixture?.cleanup();
    fixture = undefined;
  });

  it('tries a failed message again within a few ms of its stated retry time, though the poll comes every second at best', async () => {
    fixture = await createPostgresFixture();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const publisher = new RecordingPublisher();
    const attempts: { id: string; at: number }[] = [];
    let failures = 2;
    publisher.failWith = (message) => {
      attempts.push({ id: message.id, at: performance.now() });
      return failures-- > 0 ? transientFailure(message.id) : undefined;
    };
    const stated: number[] = [];
    // polls every 1 s at best: a retry found by polling would come at least 1 s after the failure
    relays.make(fixture.store, publisher, {
      pollIntervalMs: 1000,
      maxPollIntervalMs: 4000,
      retry: { baseDelayMs: 150, maxDelayMs: 1000, maxAttempts: 5, jitter: 0 },
      hooks: { onRetry: ({ retryInMs }) => stated.push(retryInMs) },
    });
    await waitFor(async () => (await fixture?.store.relayGroup())?.relays[0]?.partitions.length === 64, { what: 'the relay holding every partition' });
    const db = fromPgPool(fixture.pool);
    await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 't', type: 'x', key: 'k', payload: 1 }));
    await waitFor(() => publisher.delivered.length === 1, { timeoutMs: 20_000, what: 'the message published on its third attempt' });
    expect(attempts).toHaveLength(3);
    expect(stated).toEqual([150, 300]);
    const gaps = [(attempts[1]?.at ?? 0) - (attempts[0]?.at ?? 0), (attempts[2]?.at ?? 0) - (attempts[1]?.at ?? 0)];
    // each gap is the stated delay plus the completion and one read (a few ms to tens on a busy machine)
    expect(gaps[0]).toBeGreaterThanOrEqual(150);
    expect(gaps[1]).toBeGreaterThanOrEqual(300);
    expect(gaps[0]).toBeLessThan(150 + 250);
    expect(gaps[1]).toBeLessThan(300 + 250);
  });
});
