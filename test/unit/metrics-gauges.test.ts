import { describe, expect, it } from 'vitest';
import type { OutboxGauges, OutboxStats } from '../../src/core/ports.js';
import type { RelayHealth } from '../../src/core/relay-health.js';
import { OutboxerMetrics } from '../../src/ops/metrics/index.js';
import { grownSince } from '../../src/ops/metrics/store-gauge-reader.js';
import { relayHealth } from '../support/relay-health-fixture.js';

async function gauge(metrics: OutboxerMetrics, name: string): Promise<number | undefined> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values[0]?.value;
}

async function names(metrics: OutboxerMetrics): Promise<string[]> {
  return (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
}

/** A store port that counts its reads and answers what the test says (the SQL has its own conformance suite). */
class GaugeSourceStub {
  reads = 0;
  next: OutboxGauges = { pending: 5, pendingExact: true, dead: 1, oldestPendingAgeSeconds: 12 };
  hang = false;
  fail: Error | undefined;
  #release: (() => void) | undefined;

  async gauges(): Promise<OutboxGauges> {
    this.reads++;
    if (this.fail !== undefined) throw this.fail;
    if (this.hang) await new Promise<void>((resolve) => (this.#release = resolve));
    return this.next;
  }

  async stats(): Promise<OutboxStats> {
    throw new Error('gauges() is there: stats() must not be read');
  }

  release(): void {
    this.#release?.();
  }
}

describe('OutboxerMetrics: relay gauges', () => {
  it('exist only while a relay is observed, and read its health at each scrape', async () => {
    const metrics = new OutboxerMetrics();
    expect(await names(metrics)).not.toContain('outboxer_relay_ready');
    let now = relayHealth();
    const unobserve = metrics.observeRelay({ health: () => now });
    expect(await gauge(metrics, 'outboxer_partitions_owned')).toBe(3);
    expect(await gauge(metrics, 'outboxer_partitions')).toBe(64);
    expect(await gauge(metrics, 'outboxer_relays_alive')).toBe(2);
    expect(await gauge(metrics, 'outboxer_broker_connected')).toBe(1);
    expect(await gauge(metrics, 'outboxer_relay_ready')).toBe(1);
    expect(await gauge(metrics, 'outboxer_database_reachable')).toBe(1);
    expect(await gauge(metrics, 'outboxer_topics_paused')).toBe(0);
    expect(await gauge(metrics, 'outboxer_destinations_paused')).toBe(0);

    now = relayHealth({
      partitions: [],
      pausedTopics: ['a', 'b', '*@partner'],
      pausedDestinations: [{ destination: 'partner', by: 'operator' }],
      broker: 'connecting',
    });
    expect(await gauge(metrics, 'outboxer_partitions_owned')).toBe(0);
    expect(await gauge(metrics, 'outboxer_topics_paused')).toBe(3);
    expect(await gauge(metrics, 'outboxer_destinations_paused')).toBe(1);
    expect(await gauge(metrics, 'outboxer_broker_connected')).toBe(0);
    expect(await gauge(metrics, 'outboxer_relay_ready')).toBe(1); // connecting, holding nothing: still ready

    now = relayHealth({ relaysAlive: undefined, database: { reachable: false } }); // database lost: no count to trust
    expect(await gauge(metrics, 'outboxer_relays_alive')).toBe(0); // what OutboxerNoRelayAlive fires on

    unobserve();
    unobserve();
    expect(await names(metrics)).not.toContain('outboxer_relay_ready');
    expect(await names(metrics)).not.toContain('outboxer_database_reachable');
  });

  it.each<[string, Partial<RelayHealth>]>([
    ['stopped', { running: false }],
    ['not joined', { relayId: undefined }],
    ['database unreachable', { database: { reachable: false, error: 'ECONNREFUSED' } }],
    ['broker disconnected', { broker: 'disconnected' }],
  ])('reports a relay that is %s as not ready (the rule of /health/ready)', async (_, overrides) => {
    const metrics = new OutboxerMetrics();
    metrics.observeRelay({ health: () => relayHealth(overrides) });
    expect(await gauge(metrics, 'outboxer_relay_ready')).toBe(0);
  });

  it('with several relays: partitions owned summed, ready and connected only if every one is', async () => {
    const metrics = new OutboxerMetrics();
    metrics.observeRelay({
      health: () => relayHealth({ partitions: [0, 1], pausedTopics: ['t'], pausedDestinations: [{ destination: 'partner', by: 'operator' }] }),
    });
    metrics.observeRelay({
      health: () =>
        relayHealth({
          partitions: [2],
          relaysAlive: 3,
          broker: 'disconnected',
          pausedTopics: ['t'],
          pausedDestinations: [
            { destination: 'partner', by: 'operator' },
            { destination: 'ledger', by: 'relay' },
          ],
        }),
    });
    expect(await gauge(metrics, 'outboxer_partitions_owned')).toBe(3);
    expect(await gauge(metrics, 'outboxer_relays_alive')).toBe(3);
    expect(await gauge(metrics, 'outboxer_broker_connected')).toBe(0);
    expect(await gauge(metrics, 'outboxer_relay_ready')).toBe(0);
    expect(await gauge(metrics, 'outboxer_topics_paused')).toBe(1);
    expect(await gauge(metrics, 'outboxer_destinations_paused')).toBe(2); // each destination once
  });
});

describe('OutboxerMetrics: store gauges', () => {
  it('read the store at most once per gaugeMaxAgeMs, one read shared by the gauges of a scrape', async () => {
    const metrics = new OutboxerMetrics({ gaugeMaxAgeMs: 60_000 });
    const store = new GaugeSourceStub();
    metrics.observeStore(store);
    await metrics.metrics();
    expect(store.reads).toBe(1);
    expect(await gauge(metrics, 'outboxer_pending')).toBe(5);
    expect(await gauge(metrics, 'outboxer_dead')).toBe(1);
    expect(await gauge(metrics, 'outboxer_oldest_pending_age_seconds')).toBe(12);
    expect(await gauge(metrics, 'outboxer_database_reachable')).toBe(1);
    store.next = { pending: 6, pendingExact: true, dead: 1, oldestPendingAgeSeconds: 13 };
    await Promise.all([metrics.metrics(), metrics.metrics()]);
    expect(store.reads).toBe(1);
    expect(await gauge(metrics, 'outboxer_pending')).toBe(5);
  });

  it('with gaugeMaxAgeMs 0, read at every scrape', async () => {
    const metrics = new OutboxerMetrics({ gaugeMaxAgeMs: 0 });
    const store = new GaugeSourceStub();
    metrics.observeStore(store);
    await metrics.metrics();
    store.next = { pending: 7, pendingExact: true, dead: 0, oldestPendingAgeSeconds: 0 };
    expect(await gauge(metrics, 'outboxer_pending')).toBe(7);
    expect(store.reads).toBe(2);
  });

  it('a database that does not answer: the scrape ends within the bound, serving the last values and reachable 0', async () => {
    const metrics = new OutboxerMetrics({ gaugeMaxAgeMs: 0 });
    const store = new GaugeSourceStub();
    metrics.observeStore(store);
    expect(await gauge(metrics, 'outboxer_pending')).toBe(5);
    store.hang = true;
    store.next = { pending: 9, pendingExact: true, dead: 0, oldestPendingAgeSeconds: 1 };
    const text = await metrics.metrics(); // returns after GAUGE_READ_TIMEOUT_MS: a hung scrape would time the test out
    expect(text).toContain('outboxer_pending 5\n');
    expect(text).toContain('outboxer_database_reachable 0\n');
    // the oldest age read (12 s) grew by at least the 1 s the scrape waited: it does not freeze
    expect(Number(/^outboxer_oldest_pending_age_seconds (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(12.9);
    expect(store.reads).toBe(2); // the scrape's gauges share the read still running
    store.release();
    store.hang = false;
    expect(await gauge(metrics, 'outboxer_pending')).toBe(9);
    expect(await gauge(metrics, 'outboxer_database_reachable')).toBe(1);
  });

  it('a failed read keeps the last values and reports the database unreachable; NaN before any value', async () => {
    const metrics = new OutboxerMetrics({ gaugeMaxAgeMs: 0 });
    const store = new GaugeSourceStub();
    store.fail = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    metrics.observeStore(store);
    expect(await gauge(metrics, 'outboxer_pending')).toBeNaN();
    expect(await gauge(metrics, 'outboxer_database_reachable')).toBe(0);
    store.fail = undefined;
    expect(await gauge(metrics, 'outboxer_pending')).toBe(5);
    store.fail = new Error('terminating connection due to administrator command');
    expect(await gauge(metrics, 'outboxer_pending')).toBe(5);
    expect(await gauge(metrics, 'outboxer_database_reachable')).toBe(0);
    expect(await gauge(metrics, 'outboxer_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(12);
  });

  it('while unreachable, the oldest age is the one read plus the time since; pending, dead and an empty table as read', () => {
    const read: OutboxGauges = { pending: 5, pendingExact: false, dead: 1, oldestPendingAgeSeconds: 12 };
    expect(grownSince(read, 30_000)).toEqual({ pending: 5, pendingExact: false, dead: 1, oldestPendingAgeSeconds: 42 });
    expect(grownSince(read, -5)).toEqual(read);
    const empty: OutboxGauges = { pending: 0, pendingExact: true, dead: 0, oldestPendingAgeSeconds: 0 };
    expect(grownSince(empty, 30_000)).toEqual(empty);
  });

  it('fall back to stats() for a store without gauges(): every unpublished message counted exactly', async () => {
    const metrics = new OutboxerMetrics();
    const stats: OutboxStats = { pending: 3, scheduled: 3, published: 100, dead: 4, oldestPendingAgeSeconds: 8 };
    metrics.observeStore({ stats: async () => stats });
    expect(await gauge(metrics, 'outboxer_pending')).toBe(6);
    expect(await gauge(metrics, 'outboxer_dead')).toBe(4);
    expect(await gauge(metrics, 'outboxer_oldest_pending_age_seconds')).toBe(8);
  });

  it('database reachable needs both the stores and the relays to say so', async () => {
    const metrics = new OutboxerMetrics();
    metrics.observeStore(new GaugeSourceStub());
    const unobserve = metrics.observeRelay({ health: () => relayHealth({ database: { reachable: false } }) });
    expect(await gauge(metrics, 'outboxer_database_reachable')).toBe(0);
    unobserve();
    expect(await gauge(metrics, 'outboxer_database_reachable')).toBe(1);
  });
});
