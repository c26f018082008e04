import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Publisher } from '../../src/core/ports.js';
import type { Relay } from '../../src/core/relay.js';
import { OutboxerMetrics } from '../../src/ops/metrics/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { isolatedExchange } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const timing = { pollIntervalMs: 20, maxPollIntervalMs: 100, errorBackoffMs: 50, maxErrorBackoffMs: 200, leaseMs: 9000, publishTimeoutMs: 3000 } as const;

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

async function samples(metrics: OutboxerMetrics, name: string): Promise<Sample[]> {
  return ((await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? []) as Sample[];
}

async function value(metrics: OutboxerMetrics, name: string): Promise<number | undefined> {
  return (await samples(metrics, name)).find((s) => s.metricName === undefined || s.metricName === name)?.value;
}

/** Every label name in a Prometheus text exposition. */
function labelNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const labels = /\{(.*)\}/.exec(line)?.[1];
    for (const pair of labels?.matchAll(/(\w+)="/g) ?? []) names.add(pair[1] as string);
  }
  return names;
}

describe('OutboxerMetrics on a relay publishing to RabbitMQ', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('counts, observes commit-to-confirm and reads the gauges of the relay and its table, with bounded labels', async () => {
    const fixture: PostgresFixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const exchange = await isolatedExchange();
    cleanups.push(() => exchange.cleanup());
    const publisher: Publisher = createRabbitMqPublisher({
      url: services.amqpUrl,
      exchange: exchange.exchange,
      clientName: uniqueName('ox_metrics'),
      maxMessageBytes: 1000,
    });
    cleanups.push(() => publisher.close());
    const metrics = new OutboxerMetrics({ gaugeMaxAgeMs: 0 });
    const byTopic = new OutboxerMetrics({ topicLabel: true, gaugeMaxAgeMs: 0 });

    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const db = fromPgPool(fixture.pool);
    const topic = exchange.topic('orders');
    const secretKey = `key-${uniqueName('k')}`;
    await outbox.transaction(db, async (tx) => {
      for (let i = 0; i < 20; i++)
        await outbox.enqueue(tx, { topic, type: 'order.created', key: `${secretKey}-${i % 4}`, payload: { n: i, card: 'payload-marker' } });
      await outbox.enqueue(tx, { topic, type: 'order.created', key: secretKey, payload: { big: 'x'.repeat(2000) } }); // over maxMessageBytes: dead at once
    });
    await fixture.pool.query(`UPDATE "${fixture.schema}".outbox SET created_at = now() - interval '90 seconds'`);

    metrics.observeStore(fixture.store);
    expect(await value(metrics, 'outboxer_pending')).toBe(21);
    expect(await value(metrics, 'outboxer_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(90);
    expect(await value(metrics, 'outboxer_dead')).toBe(0);

    const relay: Relay = outbox.createRelay(publisher, { ...timing, hooks: metrics.relayHooks(byTopic.relayHooks()) });
    cleanups.push(() => relay.stop()); // run first: stopped before the publisher closes
    metrics.observeRelay(relay);
    byTopic.observeRelay(relay);
    expect(await value(metrics, 'outboxer_relay_ready')).toBe(0); // not started
    relay.start();

    await exchange.waitForDeliveries(20, 30_000);
    await waitFor(async () => (await value(metrics, 'outboxer_pending')) === 0 && (await value(metrics, 'outboxer_dead')) === 1, { what: 'the table drained' });
    expect(await value(metrics, 'outboxer_published_total')).toBe(20);
    expect(await value(metrics, 'outboxer_publish_failures_total')).toBe(1);
    expect(await value(metrics, 'outboxer_dead_total')).toBe(1);
    expect(await value(metrics, 'outboxer_oldest_pending_age_seconds')).toBe(0);
    const histogram = await samples(metrics, 'outboxer_commit_to_confirm_seconds');
    expect(histogram.find((s) => s.metricName === 'outboxer_commit_to_confirm_seconds_count')?.value).toBe(20);
    expect(histogram.find((s) => s.metricName === 'outboxer_commit_to_confirm_seconds_sum')?.value).toBeGreaterThanOrEqual(20 * 90);
    await waitFor(async () => (await value(metrics, 'outboxer_partitions_owned')) === 64, { what: 'the only relay holding every partition' });
    expect(await value(metrics, 'outboxer_partitions')).toBe(64);
    expect(await value(metrics, 'outboxer_relays_alive')).toBe(1);
    expect(await value(metrics, 'outboxer_broker_connected')).toBe(1);
    expect(await value(metrics, 'outboxer_relay_ready')).toBe(1);
    expect(await value(metrics, 'outboxer_database_reachable')).toBe(1);
    expect(await value(metrics, 'outboxer_topics_paused')).toBe(0);

    const text = await metrics.metrics();
    expect([...labelNames(text)].sort()).toEqual(['destination', 'le', 'stage']);
    for (const leak of [secretKey, 'payload-marker', services.amqpUrl, 'guest', exchange.exchange, topic]) expect(text).not.toContain(leak);
    const labelled = await byTopic.metrics();
    expect([...labelNames(labelled)].sort()).toEqual(['destination', 'le', 'stage', 'topic']);
    expect(labelled).toContain(`outboxer_published_total{topic="${topic}",destination="default"} 20`);
    expect(labelled).toContain(`outboxer_dead_total{topic="${topic}",destination="default"} 1`);
    for (const leak of [secretKey, 'payload-marker', 'guest']) expect(labelled).not.toContain(leak);

    await relay.stop();
    await publisher.close();
    expect(await value(metrics, 'outboxer_broker_connected')).toBe(0);
    expect(await value(metrics, 'outboxer_relay_ready')).toBe(0);
  });

  it('a database that stops answering: the scrape still ends, with the last values and outboxer_database_reachable 0', async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const proxy = await TcpProxy.start(Number(new URL(services.postgresUrl).port || 5432));
    const url = new URL(services.postgresUrl);
    url.host = `127.0.0.1:${proxy.port}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
    pool.on('error', () => undefined);
    cleanups.push(async () => {
      await proxy.close(); // resets the frozen connections, so the pool can end
      await pool.end();
    });
    const store = new PostgresOutboxStore(fromPgPool(pool), { schema: fixture.schema });
    await new Outbox<SqlExecutor>(fixture.store).transaction(fromPgPool(fixture.pool), (tx) =>
      new Outbox<SqlExecutor>(fixture.store).enqueue(tx, { topic: 'a.b', type: 't', payload: {} }),
    );
    const metrics = new OutboxerMetrics({ gaugeMaxAgeMs: 0 });
    metrics.observeStore(store);
    expect(await value(metrics, 'outboxer_pending')).toBe(1);
    expect(await value(metrics, 'outboxer_database_reachable')).toBe(1);

    proxy.setMode('blackhole');
    const text = await metrics.metrics(); // a hung read would time the test out
    expect(text).toContain('outboxer_pending 1\n');
    expect(text).toContain('outboxer_database_reachable 0\n');

    proxy.setMode('forward');
    proxy.resetAll();
    await waitFor(async () => (await value(metrics, 'outboxer_database_reachable')) === 1, { what: 'the database reachable again' });
    expect(await value(metrics, 'outboxer_pending')).toBe(1);
  });
  it('a relay that loses its database: relays alive 0 once its lease lapses, the oldest age keeps growing, both back after', async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const exchange = await isolatedExchange();
    cleanups.push(() => exchange.cleanup());
    const proxy = await TcpProxy.start(Number(new URL(services.postgresUrl).port || 5432));
    const url = new URL(services.postgresUrl);
    url.host = `127.0.0.1:${proxy.port}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
    pool.on('error', () => undefined);
    cleanups.push(async () => {
      await proxy.close();
      await pool.end();
    });
    const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange: exchange.exchange, clientName: uniqueName('ox_metrics') });
    cleanups.push(() => publisher.close());
    const store = new PostgresOutboxStore(fromPgPool(pool), { schema: fixture.schema });
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    // delayed for an hour: it stays pending (the relay publishes nothing), and counts from its creation
    await outbox.transaction(fromPgPool(fixture.pool), (tx) =>
      outbox.enqueue(tx, { topic: exchange.topic('later'), type: 't', payload: {}, delayMs: 3_600_000 }),
    );
    await fixture.pool.query(`UPDATE "${fixture.schema}".outbox SET created_at = now() - interval '90 seconds'`);
    const metrics = new OutboxerMetrics({ gaugeMaxAgeMs: 0 });
    metrics.observeStore(store);
    const relay = new Outbox<SqlExecutor>(store).createRelay(publisher, { ...timing, leaseMs: 3000, publishTimeoutMs: 1000 });
    cleanups.push(() => relay.stop()); // run first: stopped before the proxy and publisher close
    metrics.observeRelay(relay);
    relay.start();
    await waitFor(async () => (await value(metrics, 'outboxer_relays_alive')) === 1, { what: 'the relay joined' });
    const ageRead = (await value(metrics, 'outboxer_oldest_pending_age_seconds')) as number;
    expect(ageRead).toBeGreaterThanOrEqual(90);

    proxy.setMode('blackhole');
    await waitFor(async () => (await value(metrics, 'outboxer_relays_alive')) === 0, { what: 'relays alive 0 once the lease is no longer trusted' });
    expect(relay.health().relaysAlive).toBeUndefined();
    const text = await metrics.metrics(); // the read waits GAUGE_READ_TIMEOUT_MS (1 s) before serving the last values
    expect(text).toContain('outboxer_database_reachable 0\n');
    expect(Number(/^outboxer_oldest_pending_age_seconds (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(ageRead + 0.9);

    proxy.setMode('forward');
    proxy.resetAll();
    await waitFor(async () => (await value(metrics, 'outboxer_relays_alive')) === 1, { what: 'the relay back in its group' });
    await waitFor(async () => (await value(metrics, 'outboxer_database_reachable')) === 1, { what: 'the database reachable again' });
    const ageAfter = (await value(metrics, 'outboxer_oldest_pending_age_seconds')) as number;
    expect(ageAfter).toBeGreaterThanOrEqual(ageRead); // read again from the database
  });
});
