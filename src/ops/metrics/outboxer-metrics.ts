import { Gauge, type Registry } from 'prom-client';
import type { InboxHooks } from '../../consumer/inbox-options.js';
import type { RelayHooks } from '../../core/relay-options.js';
import { ConsumerCounters } from './consumer-counters.js';
import { GaugeSet, registryTaken } from './gauge-set.js';
import { type OutboxerMetricsOptions, resolveMetricsOptions } from './metrics-options.js';
import { RelayCounters } from './relay-counters.js';
import { type HealthSource, RelayGauges } from './relay-gauges.js';
import type { GaugeSource } from './store-gauge-reader.js';
import { StoreGauges } from './store-gauges.js';
import { TopicLabels } from './topic-labels.js';

/**
 * Prometheus metrics of outboxer (docs/metrics.md): counters and histograms moved by the hooks of relays and
 * inboxes (`relayHooks`, `inboxHooks`), and gauges read at scrape time from relays (`observeRelay`, from memory)
 * and stores (`observeStore`, a few index reads, cached up to `gaugeMaxAgeMs`). Labels stay bounded: `stage`,
 * `consumer`, and `topic` only when `topicLabel` allows it; never a key, an id, a payload or a URL.
 *
 * @example
 * const metrics = new OutboxerMetrics();
 * const relay = outbox.createRelay(publisher, { hooks: metrics.relayHooks() });
 * metrics.observeRelay(relay);
 * metrics.observeStore(store);
 * // serve `await metrics.metrics()` with `metrics.contentType` on GET /metrics
 */
export class OutboxerMetrics {
  readonly registry: Registry;
  readonly #relayCounters: RelayCounters;
  readonly #consumerCounters: ConsumerCounters;
  readonly #relayGauges: RelayGauges;
  readonly #storeGauges: StoreGauges;
  readonly #reachable: GaugeSet;

  constructor(options: OutboxerMetricsOptions = {}) {
    const resolved = resolveMetricsOptions(options);
    this.registry = resolved.registry;
    const topics = new TopicLabels(resolved.topicLabel);
    try {
      this.#relayCounters = new RelayCounters(this.registry, topics, resolved.commitToConfirmBuckets);
      this.#consumerCounters = new ConsumerCounters(this.registry, topics);
    } catch (error) {
      const name = /metric with the name (\w+)/.exec(error instanceof Error ? error.message : '')?.[1];
      if (name !== undefined) throw registryTaken(name);
      throw error;
    }
    this.#relayGauges = new RelayGauges(this.registry);
    this.#storeGauges = new StoreGauges(this.registry, resolved.gaugeMaxAgeMs);
    const reachable: Gauge = new Gauge({
      name: 'outboxer_database_reachable',
      help: "1 when the database answers: the observed stores' last gauge read succeeded in time, and every observed relay's last statement did; 0 otherwise.",
      registers: [],
      collect: async () => reachable.set((await this.#databaseReachable()) ? 1 : 0),
    });
    this.#reachable = new GaugeSet(this.registry, [{ name: 'outboxer_database_reachable', gauge: reachable }]);
  }

  /** The registry's content type, for the Content-Type header of GET /metrics. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text of the registry (every metric registered there, outboxer's and the user's). */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  /** Relay hooks that count what the relay does, then call `hooks` (pass them as the relay's `hooks` option). */
  relayHooks(hooks?: RelayHooks): RelayHooks {
    return this.#relayCounters.hooks(hooks);
  }

  /** Inbox hooks that count what the inbox of `consumer` decides (label `consumer`), then call `hooks`. */
  inboxHooks(consumer: string, hooks?: InboxHooks): InboxHooks {
    return this.#consumerCounters.hooks(consumer, hooks);
  }

  /** Reports a relay's partitions, live relays, broker, readiness and paused topics at each scrape; returns "unobserve". */
  observeRelay(relay: HealthSource): () => void {
    return this.#observe(this.#relayGauges.observe(relay));
  }

  /** Reports the store's pending, dead and oldest age at scrape time (cached up to gaugeMaxAgeMs); returns "unobserve". */
  observeStore(store: GaugeSource): () => void {
    return this.#observe(this.#storeGauges.observe(store));
  }

  #observe(release: () => void): () => void {
    let releaseReachable: () => void;
    try {
      releaseReachable = this.#reachable.acquire();
    } catch (error) {
      release();
      throw error;
    }
    return () => {
      release();
      releaseReachable();
    };
  }

  async #databaseReachable(): Promise<boolean> {
    const relays = this.#relayGauges.healths().every((health) => health.database.reachable);
    const stores = (await this.#storeGauges.snapshots()).every((snapshot) => snapshot.reachable);
    return relays && stores;
  }
}
