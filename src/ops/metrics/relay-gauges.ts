import { Gauge, type Registry } from 'prom-client';
import type { RelayHealth } from '../../core/relay-health.js';
import { relayReadiness } from '../../core/relay-readiness.js';
import { GaugeSet } from './gauge-set.js';

/** What `observeRelay` reads: a `Relay`, whose `health()` answers from memory. */
export interface HealthSource {
  health(): RelayHealth;
}

/**
 * The gauges of the relays of this process, read from `health()` at scrape time (no I/O). With several relays
 * observed: partitions owned summed, the table's partition count and relays alive the largest seen, broker
 * connected and ready only if every relay is, paused topics counted once each. A relay whose `relaysAlive` is
 * undefined (database unreachable, no trusted lease) counts 0, so OutboxerNoRelayAlive fires once every relay
 * is in that state.
 */
export class RelayGauges {
  readonly #relays = new Set<{ readonly relay: HealthSource }>();
  readonly #set: GaugeSet;

  constructor(registry: Registry) {
    const gauge = (name: string, help: string, value: (healths: readonly RelayHealth[]) => number) => {
      const metric: Gauge = new Gauge({ name, help, registers: [], collect: () => metric.set(value(this.healths())) });
      return { name, gauge: metric };
    };
    this.#set = new GaugeSet(registry, [
      gauge('outboxer_partitions_owned', 'Partitions the relays of this process hold now (owned or draining).', (all) => sum(all, (h) => h.partitions.length)),
      gauge('outboxer_partitions', "The table's partition count, as of the relay's last membership read.", (all) => max(all, (h) => h.partitionCount ?? 0)),
      gauge(
        'outboxer_relays_alive',
        "Live relays of the table (every process), as of this relay's last trusted heartbeat; 0 while it cannot reach the database or holds no trusted lease.",
        (all) => max(all, (h) => h.relaysAlive ?? 0),
      ),
      gauge(
        'outboxer_broker_connected',
        "1 while the publisher's broker connection is up, 0 otherwise (connecting, disconnected, or a publisher that does not say).",
        (all) => (all.every((h) => h.broker === 'connected') ? 1 : 0),
      ),
      gauge(
        'outboxer_relay_ready',
        '1 when the relay is ready (as /health/ready: running, joined, database reachable, broker not disconnected), 0 otherwise.',
        (all) => (all.every((h) => relayReadiness(h).ready) ? 1 : 0),
      ),
      gauge(
        'outboxer_topics_paused',
        'Topics the relays hold now: their destination is missing, or an operator paused them.',
        (all) => new Set(all.flatMap((h) => h.pausedTopics)).size,
      ),
      gauge(
        'outboxer_destinations_paused',
        'Destinations the relays hold as a whole now: an operator paused them, or their broker is out of reach.',
        (all) => new Set(all.flatMap((h) => (h.pausedDestinations ?? []).map((d) => d.destination))).size,
      ),
    ]);
  }

  /** The health of every observed relay, now. */
  healths(): RelayHealth[] {
    return [...this.#relays].map(({ relay }) => relay.health());
  }

  get size(): number {
    return this.#relays.size;
  }

  /** Observes `relay` until the returned function is called. */
  observe(relay: HealthSource): () => void {
    const release = this.#set.acquire();
    const entry = { relay };
    this.#relays.add(entry);
    return () => {
      this.#relays.delete(entry);
      release();
    };
  }
}

function sum<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((total, item) => total + value(item), 0);
}

function max<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((largest, item) => Math.max(largest, value(item)), 0);
}
