import { describe, expect, it } from 'vitest';
import type { InboxEntryRef } from '../../src/core/ports/inbox-store.js';
import type { RelayHooks } from '../../src/core/relay-options.js';
import { MAX_TOPIC_LABELS, OTHER_TOPIC, OutboxerMetrics } from '../../src/ops/metrics/index.js';

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** Every sample of `name` in the registry, as a scrape collects it. */
async function samples(metrics: OutboxerMetrics, name: string): Promise<Sample[]> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  return metric.values as Sample[];
}

async function value(metrics: OutboxerMetrics, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const all = await samples(metrics, name);
  return all.find((s) => (s.metricName ?? name) === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;
}

const message = { id: '0191d1a4-7c3e-7000-8000-000000000001', topic: 'orders.created', key: 'order-42', attempts: 1, destination: 'default' };

describe('OutboxerMetrics.relayHooks', () => {
  it('counts published, failed attempts (retried or dead), dead and loop errors by stage, each from 0', async () => {
    const metrics = new OutboxerMetrics();
    for (const stage of ['lease', 'read', 'mark', 'publish', 'housekeeping']) expect(await value(metrics, 'outboxer_relay_errors_total', { stage })).toBe(0);
    const hooks = metrics.relayHooks();
    hooks.onPublished?.({ ...message, createdAt: new Date() });
    hooks.onPublished?.({ ...message, createdAt: new Date() });
    hooks.onRetry?.({ ...message, error: 'nacked', retryInMs: 1000 });
    hooks.onDead?.({ ...message, attempts: 10, reason: 'unroutable' });
    hooks.onError?.({ stage: 'read', error: 'connection refused' });
    const own = { destination: 'default' };
    expect(await value(metrics, 'outboxer_published_total', own)).toBe(2);
    expect(await value(metrics, 'outboxer_publish_failures_total', own)).toBe(2);
    expect(await value(metrics, 'outboxer_dead_total', own)).toBe(1);
    expect(await value(metrics, 'outboxer_relay_errors_total', { stage: 'read' })).toBe(1);
    expect(await value(metrics, 'outboxer_relay_errors_total', { stage: 'lease' })).toBe(0);
  });

  it('observes commit-to-confirm in seconds from the row insert time, never below 0 (clock skew)', async () => {
    const metrics = new OutboxerMetrics({ commitToConfirmBuckets: [0.5, 5, 60] });
    const hooks = metrics.relayHooks();
    hooks.onPublished?.({ ...message, createdAt: new Date(Date.now() - 2000) });
    hooks.onPublished?.({ ...message, createdAt: new Date(Date.now() + 60_000) });
    const all = await samples(metrics, 'outboxer_commit_to_confirm_seconds');
    const bucket = (le: number) => all.find((s) => s.metricName === 'outboxer_commit_to_confirm_seconds_bucket' && s.labels.le === le)?.value;
    expect([bucket(0.5), bucket(5), bucket(60)]).toEqual([1, 2, 2]);
    expect(all.find((s) => s.metricName === 'outboxer_commit_to_confirm_seconds_count')?.value).toBe(2);
    const sum = all.find((s) => s.metricName === 'outboxer_commit_to_confirm_seconds_sum')?.value ?? 0;
    expect(sum).toBeGreaterThanOrEqual(2);
    expect(sum).toBeLessThan(30);
  });

  it('counts first, then calls the given hooks; the hooks it does not count pass through unchanged', async () => {
    const metrics = new OutboxerMetrics();
    const calls: string[] = [];
    const onFenced: RelayHooks['onFenced'] = () => calls.push('fenced');
    const hooks = metrics.relayHooks({
      onPublished: () => calls.push('published'),
      onRetry: () => calls.push('retry'),
      onDead: () => calls.push('dead'),
      onError: (e) => calls.push(`error:${e.stage}`),
      onFenced,
    });
    hooks.onPublished?.({ ...message, createdAt: new Date() });
    hooks.onRetry?.({ ...message, error: 'x', retryInMs: 1 });
    hooks.onDead?.({ ...message, reason: 'y' });
    hooks.onError?.({ stage: 'mark', error: 'z' });
    expect(calls).toEqual(['published', 'retry', 'dead', 'error:mark']);
    expect(hooks.onFenced).toBe(onFenced);
    expect(Object.isFrozen(hooks)).toBe(true);
  });

  it("labels every relay counter by destination (fan-out), `default` for the relay's own publisher", async () => {
    const metrics = new OutboxerMetrics();
    const hooks = metrics.relayHooks();
    hooks.onPublished?.({ ...message, createdAt: new Date() });
    hooks.onPublished?.({ ...message, destination: 'partner', createdAt: new Date() });
    hooks.onDead?.({ ...message, destination: 'partner', reason: 'r' });
    expect(await value(metrics, 'outboxer_published_total', { destination: 'partner' })).toBe(1);
    expect(await value(metrics, 'outboxer_published_total', { destination: 'default' })).toBe(1);
    expect(await value(metrics, 'outboxer_dead_total', { destination: 'partner' })).toBe(1);
    const histogram = await samples(metrics, 'outboxer_commit_to_confirm_seconds');
    expect(histogram.find((s) => s.metricName === 'outboxer_commit_to_confirm_seconds_count' && s.labels.destination === 'partner')?.value).toBe(1);
  });

  it('has no topic label unless topicLabel allows it, and never a key, an id or a payload', async () => {
    const metrics = new OutboxerMetrics();
    metrics.relayHooks().onPublished?.({ ...message, createdAt: new Date() });
    expect(await samples(metrics, 'outboxer_published_total')).toEqual([{ labels: { destination: 'default' }, value: 1 }]);
    const text = await metrics.metrics();
    expect(text).not.toContain('topic=');
    expect(text).not.toContain(message.key);
    expect(text).not.toContain(message.id);
  });

  it('with topicLabel, labels counters and the histogram by topic, at most MAX_TOPIC_LABELS topics, then (other)', async () => {
    const metrics = new OutboxerMetrics({ topicLabel: true });
    const hooks = metrics.relayHooks();
    for (let i = 0; i < MAX_TOPIC_LABELS + 5; i++) hooks.onPublished?.({ ...message, topic: `tenant.${i}`, createdAt: new Date() });
    hooks.onPublished?.({ ...message, topic: 'tenant.0', createdAt: new Date() });
    hooks.onDead?.({ ...message, topic: 'tenant.1', reason: 'r' });
    const published = await samples(metrics, 'outboxer_published_total');
    expect(published).toHaveLength(MAX_TOPIC_LABELS + 1);
    expect(published.find((s) => s.labels.topic === 'tenant.0')?.value).toBe(2);
    expect(published.find((s) => s.labels.topic === OTHER_TOPIC)?.value).toBe(5);
    expect(await value(metrics, 'outboxer_dead_total', { topic: 'tenant.1', destination: 'default' })).toBe(1);
    const histogram = await samples(metrics, 'outboxer_commit_to_confirm_seconds');
    expect(histogram.find((s) => s.metricName === 'outboxer_commit_to_confirm_seconds_count' && s.labels.topic === 'tenant.0')?.value).toBe(2);
    expect(await samples(metrics, 'outboxer_relay_errors_total')).toSatisfy((all: Sample[]) => all.every((s) => !('topic' in s.labels)));
  });
});

describe('OutboxerMetrics.inboxHooks', () => {
  const entry: InboxEntryRef = { consumer: 'billing', id: message.id, type: 'order.created', topic: 'orders.created', key: 'order-42' };

  it('counts processed, duplicates, failures (retried or dead) and dead by consumer, each consumer from 0', async () => {
    const metrics = new OutboxerMetrics();
    const billing = metrics.inboxHooks('billing');
    metrics.inboxHooks('shipping');
    expect(await value(metrics, 'outboxer_consumer_processed_total', { consumer: 'shipping' })).toBe(0);
    billing.onProcessed?.({ ...entry, attempts: 1, durationMs: 3 });
    billing.onDuplicate?.({ ...entry, state: 'processed' });
    billing.onRetry?.({ ...entry, attempts: 1, error: 'e', retryInMs: 10, durationMs: 1 });
    billing.onDead?.({ ...entry, attempts: 3, reason: 'r', durationMs: 2 });
    expect(await value(metrics, 'outboxer_consumer_processed_total', { consumer: 'billing' })).toBe(1);
    expect(await value(metrics, 'outboxer_consumer_duplicates_total', { consumer: 'billing' })).toBe(1);
    expect(await value(metrics, 'outboxer_consumer_failures_total', { consumer: 'billing' })).toBe(2);
    expect(await value(metrics, 'outboxer_consumer_dead_total', { consumer: 'billing' })).toBe(1);
    expect(await value(metrics, 'outboxer_consumer_dead_total', { consumer: 'shipping' })).toBe(0);
  });

  it("observes the handler's duration in seconds when a handler ran, and nothing when none did", async () => {
    const metrics = new OutboxerMetrics();
    const hooks = metrics.inboxHooks('billing');
    hooks.onProcessed?.({ ...entry, attempts: 1, durationMs: 20 });
    hooks.onRetry?.({ ...entry, attempts: 1, error: 'e', retryInMs: 10, durationMs: 4 });
    hooks.onDead?.({ ...entry, attempts: 1, reason: 'invalid payload' });
    const all = await samples(metrics, 'outboxer_consumer_handler_duration_seconds');
    const count = all.find((s) => s.metricName === 'outboxer_consumer_handler_duration_seconds_count');
    const sum = all.find((s) => s.metricName === 'outboxer_consumer_handler_duration_seconds_sum');
    expect(count).toMatchObject({ labels: { consumer: 'billing' }, value: 2 });
    expect(sum?.value).toBeCloseTo(0.024, 6);
  });

  it('calls the given hooks after counting, and labels by topic only with topicLabel', async () => {
    const seen: string[] = [];
    const plain = new OutboxerMetrics();
    plain.inboxHooks('billing', { onProcessed: (e) => seen.push(`processed:${e.durationMs}`) }).onProcessed?.({ ...entry, attempts: 1, durationMs: 5 });
    expect(seen).toEqual(['processed:5']);
    expect(await samples(plain, 'outboxer_consumer_processed_total')).toEqual([{ labels: { consumer: 'billing' }, value: 1 }]);

    const labelled = new OutboxerMetrics({ topicLabel: true });
    labelled.inboxHooks('billing').onProcessed?.({ ...entry, attempts: 1, durationMs: 5 });
    expect(await samples(labelled, 'outboxer_consumer_processed_total')).toEqual([{ labels: { consumer: 'billing', topic: 'orders.created' }, value: 1 }]);
  });
});
