import { Gauge, type Registry } from 'prom-client';
import type { OutboxGauges } from '../../core/ports.js';
import { GaugeSet } from './gauge-set.js';
import { type GaugeSource, StoreGaugeReader, type StoreSnapshot } from './store-gauge-reader.js';

/**
 * The table's gauges, read from the observed stores at scrape time through a StoreGaugeReader each (cached up to
 * `gaugeMaxAgeMs`, bounded wait). Before the first read succeeds they show NaN (no value), never a made-up 0.
 * With several stores observed: pending and dead summed, the oldest age the largest.
 */
export class StoreGauges {
  readonly #readers = new Set<StoreGaugeReader>();
  readonly #set: GaugeSet;
  readonly #maxAgeMs: number;

  constructor(registry: Registry, maxAgeMs: number) {
    this.#maxAgeMs = maxAgeMs;
    const gauge = (name: string, help: string, value: (gauges: readonly OutboxGauges[]) => number) => {
      const metric: Gauge = new Gauge({
        name,
        help,
        registers: [],
        collect: async () => {
          const known = (await this.snapshots()).flatMap((snapshot) => (snapshot.gauges === undefined ? [] : [snapshot.gauges]));
          metric.set(known.length === 0 ? Number.NaN : value(known));
        },
      });
      return { name, gauge: metric };
    };
    this.#set = new GaugeSet(registry, [
      gauge(
        'outboxer_pending',
        'Messages not yet published nor dead (due or scheduled): exact up to 10,000 in PostgreSQL, estimated above (docs/metrics.md).',
        (all) => all.reduce((total, g) => total + g.pending, 0),
      ),
      gauge('outboxer_dead', 'Messages parked as dead, waiting for an operator: exact up to 10,000, estimated above.', (all) =>
        all.reduce((total, g) => total + g.dead, 0),
      ),
      gauge(
        'outboxer_oldest_pending_age_seconds',
        'Age of the oldest pending message by the database clock (0 when none): the signal to alert on. While the database does not answer, the last age read plus the time since.',
        (all) => all.reduce((oldest, g) => Math.max(oldest, g.oldestPendingAgeSeconds), 0),
      ),
    ]);
  }

  get size(): number {
    return this.#readers.size;
  }

  /** Every observed store's snapshot for this scrape (the readers share one read among concurrent scrapes). */
  snapshots(): Promise<StoreSnapshot[]> {
    return Promise.all([...this.#readers].map((reader) => reader.snapshot()));
  }

  /** Observes `store` until the returned function is called. */
  observe(store: GaugeSource): () => void {
    const release = this.#set.acquire();
    const reader = new StoreGaugeReader(store, this.#maxAgeMs);
    this.#readers.add(reader);
    return () => {
      this.#readers.delete(reader);
      release();
    };
  }
}
