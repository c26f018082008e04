import type { Gauge, Registry } from 'prom-client';
import { ConfigurationError } from '../../core/errors.js';

/**
 * Gauges that exist only while something is observed: registered when the first observer arrives and removed
 * when the last one leaves, so a process that runs no relay shows no relay gauges (rather than zeros that look
 * like an outage).
 */
export class GaugeSet {
  readonly #registry: Registry;
  readonly #gauges: readonly { readonly name: string; readonly gauge: Gauge }[];
  #observers = 0;

  constructor(registry: Registry, gauges: readonly { readonly name: string; readonly gauge: Gauge }[]) {
    this.#registry = registry;
    this.#gauges = gauges;
  }

  /** Counts an observer in; returns its release (idempotent). */
  acquire(): () => void {
    if (this.#observers === 0) this.#register();
    this.#observers++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#observers--;
      if (this.#observers === 0) for (const { name } of this.#gauges) this.#registry.removeSingleMetric(name);
    };
  }

  #register(): void {
    const taken = this.#gauges.find(({ name }) => this.#registry.getSingleMetric(name) !== undefined);
    if (taken !== undefined) throw registryTaken(taken.name);
    for (const { gauge } of this.#gauges) this.#registry.registerMetric(gauge);
  }
}

/** The registry already holds a metric of this name: two OutboxerMetrics (or another library) share it. */
export function registryTaken(name: string): ConfigurationError {
  return new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `metrics option registry: it already holds a metric named ${name}; make one OutboxerMetrics per registry and pass its relayHooks, inboxHooks and observe calls every relay, inbox and store of the process`,
    { options: ['registry'] },
  );
}
