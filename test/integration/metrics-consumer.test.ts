import { afterEach, describe, expect, it } from 'vitest';
import { Inbox } from '../../src/consumer/inbox.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { newMessageId } from '../../src/core/ids.js';
import { OutboxerMetrics } from '../../src/ops/metrics/index.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { createConsumerFixture, type ConsumerFixture } from '../support/consumer-fixture.js';

function received(overrides: Partial<ReceivedMessage> = {}): ReceivedMessage {
  return {
    id: newMessageId(),
    topic: 'orders.created',
    type: 'order.created',
    key: 'order-7',
    headers: {},
    payload: { n: 1 },
    contentType: 'application/json',
    deliveryCount: 1,
    ...overrides,
  };
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

async function sample(metrics: OutboxerMetrics, name: string, metricName = name): Promise<Sample | undefined> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values as Sample[] | undefined)?.find((s) => (s.metricName ?? name) === metricName);
}

describe('OutboxerMetrics on an Inbox over PostgreSQL', () => {
  let fixture: ConsumerFixture | undefined;
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });

  it("counts processed, duplicates, failures and dead by consumer, and observes the handler's own run time", async () => {
    fixture = await createConsumerFixture();
    const f = fixture;
    const metrics = new OutboxerMetrics();
    const durations: (number | undefined)[] = [];
    const inbox = new Inbox<SqlExecutor>(f.inboxStore, {
      consumer: 'billing',
      retry: { baseDelayMs: 1, maxDelayMs: 1, maxAttempts: 2 },
      hooks: metrics.inboxHooks('billing', { onProcessed: (e) => durations.push(e.durationMs), onRetry: (e) => durations.push(e.durationMs) }),
    });

    const first = received();
    expect((await inbox.handle(first, (m, tx) => f.apply(m, tx))).status).toBe('processed');
    expect((await inbox.handle(first, (m, tx) => f.apply(m, tx))).status).toBe('duplicate');

    const slow = received();
    expect(
      (
        await inbox.handle(slow, async (m, tx) => {
          await tx.query('SELECT pg_sleep(0.05)');
          await f.apply(m, tx);
        })
      ).status,
    ).toBe('processed');

    const poison = received({ key: 'order-8' });
    const failing = async (): Promise<void> => {
      throw new Error('the billing service refused it');
    };
    expect((await inbox.handle(poison, failing)).status).toBe('retry');
    expect((await inbox.handle(poison, failing)).status).toBe('dead');

    // a body that is not JSON goes dead before any handler runs: counted, but no handler duration
    const garbled = await inbox.handleDelivery(
      {
        id: newMessageId(),
        type: 'order.created',
        key: undefined,
        topic: 'orders.created',
        headers: {},
        body: new TextEncoder().encode('{not json'),
        contentType: 'application/json',
        deliveryCount: 1,
      },
      (m, tx) => f.apply(m, tx),
    );
    expect(garbled.status).toBe('dead');

    const labels = { consumer: 'billing' };
    expect(await sample(metrics, 'outboxer_consumer_processed_total')).toEqual({ labels, value: 2 });
    expect(await sample(metrics, 'outboxer_consumer_duplicates_total')).toEqual({ labels, value: 1 });
    expect(await sample(metrics, 'outboxer_consumer_failures_total')).toEqual({ labels, value: 3 });
    expect(await sample(metrics, 'outboxer_consumer_dead_total')).toEqual({ labels, value: 2 });
    const count = await sample(metrics, 'outboxer_consumer_handler_duration_seconds', 'outboxer_consumer_handler_duration_seconds_count');
    expect(count).toMatchObject({ labels, value: 4 }); // first, slow, and the two failed runs of poison
    const sum = await sample(metrics, 'outboxer_consumer_handler_duration_seconds', 'outboxer_consumer_handler_duration_seconds_sum');
    expect(sum?.value).toBeGreaterThanOrEqual(0.05); // the slow handler slept 50 ms inside its transaction
    expect(durations).toHaveLength(3);
    expect(durations.every((ms) => typeof ms === 'number' && ms >= 0)).toBe(true);
    expect(durations[1]).toBeGreaterThanOrEqual(50);

    const text = await metrics.metrics();
    for (const leak of [first.id, poison.id, 'order-7', 'billing service refused']) expect(text).not.toContain(leak);
  });
});
