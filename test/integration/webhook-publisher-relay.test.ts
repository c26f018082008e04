import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { v2Timing } from '../support/partition-relay-fixture.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { newSecret, webhookPublishers, WebhookReceiver } from '../support/webhook-harness.js';
import { waitFor } from '../support/wait-for.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What the relay does with each class of answer, end to end: a real relay, table and receiver. */
describe('a relay publishing to webhooks', () => {
  it('publishes on 2xx, waits out Retry-After, parks a 422 as dead, and pauses a 404 topic until its endpoint exists', async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const receiver = await WebhookReceiver.start();
    cleanups.push(() => receiver.close());
    const publishers = webhookPublishers();
    cleanups.push(() => publishers.closeAll());
    let deployed = false;
    let limitedOnce = false;
    receiver.respond = (request) => {
      const topic = request.headers['outbox-topic'];
      if (topic === 'orders.refused') return { status: 422 };
      if (topic === 'orders.limited' && !limitedOnce) {
        limitedOnce = true;
        return { status: 429, headers: { 'retry-after': '1' } };
      }
      if (topic === 'orders.missing' && !deployed) return { status: 404 };
      return { status: 204 };
    };
    const events = {
      published: new Map<string, number>(),
      retried: [] as { topic: string; retryInMs: number }[],
      dead: [] as string[],
      paused: [] as string[],
      resumed: [] as string[],
    };
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const relay = outbox.createRelay(publishers.make({ url: receiver.url(), secret: newSecret(), publishTimeoutMs: 1000 }), {
      ...v2Timing,
      retry: { baseDelayMs: 50, maxDelayMs: 100, maxAttempts: 5, jitter: 0 },
      hooks: {
        onPublished: (event) => void events.published.set(event.topic, (events.published.get(event.topic) ?? 0) + 1),
        onRetry: (event) => void events.retried.push({ topic: event.topic, retryInMs: event.retryInMs }),
        onDead: (event) => void events.dead.push(`${event.topic}: ${event.reason}`),
        onTopicPaused: (event) => void events.paused.push(event.topic),
        onTopicResumed: (event) => void events.resumed.push(event.topic),
      },
    });
    cleanups.push(() => relay.stop());
    await outbox.transaction(fromPgPool(fixture.pool), (tx) =>
      outbox.enqueueMany(
        tx,
        ['orders.ok', 'orders.limited', 'orders.refused', 'orders.missing'].map((topic) => ({ topic, type: 'order.created', payload: { topic } })),
      ),
    );
    const started = Date.now();
    relay.start();

    await waitFor(() => events.published.has('orders.limited') && events.dead.length === 1 && events.paused.length === 1, {
      what: `the relay's outcomes: ${JSON.stringify({ ...events, published: [...events.published] })}`,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(events.retried.find((retry) => retry.topic === 'orders.limited')?.retryInMs).toBeGreaterThanOrEqual(1000);
    expect(events.dead[0]).toMatch(/^orders\.refused: OUTBOXER_REJECTED: .*HTTP 422 Unprocessable Entity/);
    expect(events.paused).toEqual(['orders.missing']);
    expect(events.published.has('orders.missing')).toBe(false);
    expect(events.retried.some((retry) => retry.topic === 'orders.missing')).toBe(false); // paused, not counted

    deployed = true;
    await waitFor(() => events.published.has('orders.missing'), { what: 'the paused topic to resume once its endpoint exists' });
    expect(events.resumed).toEqual(['orders.missing']);
    expect(Object.fromEntries(events.published)).toEqual({ 'orders.ok': 1, 'orders.limited': 1, 'orders.missing': 1 });
  });
});
