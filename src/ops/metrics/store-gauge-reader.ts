import { describeError } from '../../core/errors.js';
import type { OutboxGauges, OutboxOperator } from '../../core/ports.js';

/** What `observeStore` reads: the store's cheap `gauges()`, or its `stats()` (a full count) when it has none. */
export type GaugeSource = Pick<OutboxOperator, 'gauges' | 'stats'>;

/** A scrape waits at most this long for the database; then it serves the last values and reports it unreachable. */
export const GAUGE_READ_TIMEOUT_MS = 1000;

/** The store's gauges as one scrape sees them. */
export interface StoreSnapshot {
  /** The last values read, however old; undefined before the first read that succeeded. */
  readonly gauges: OutboxGauges | undefined;
  /** The last read succeeded within GAUGE_READ_TIMEOUT_MS. */
  readonly reachable: boolean;
  /** Why it is unreachable (a driver message, or the timeout), for logs; never shown as a label. */
  readonly error?: string;
}

/**
 * Reads a store's gauges for scrapes: at most once per `maxAgeMs` (the cache serves the rest), one read at a
 * time (scrapes that come during a read share it), and never waiting past `timeoutMs`: a slow or unreachable
 * database leaves the last values in place and `reachable` false, and the read still running updates the cache
 * whenever it ends.
 */
export class StoreGaugeReader {
  readonly #read: () => Promise<OutboxGauges>;
  readonly #maxAgeMs: number;
  readonly #timeoutMs: number;
  #snapshot: StoreSnapshot = { gauges: undefined, reachable: false };
  /** performance.now() of the last read that ended (succeeded or failed); none yet. */
  #endedAt: number | undefined;
  #running: Promise<void> | undefined;

  constructor(source: GaugeSource, maxAgeMs: number, timeoutMs = GAUGE_READ_TIMEOUT_MS) {
    const gauges = source.gauges?.bind(source);
    this.#read = gauges ?? (() => gaugesFromStats(source));
    this.#maxAgeMs = maxAgeMs;
    this.#timeoutMs = timeoutMs;
  }

  /** The snapshot for a scrape now: cached if fresh enough, otherwise read (bounded by the timeout). */
  async snapshot(): Promise<StoreSnapshot> {
    if (this.#endedAt !== undefined && performance.now() - this.#endedAt < this.#maxAgeMs) return this.#snapshot;
    let running = this.#running;
    if (running === undefined) {
      const started = this.#start();
      this.#running = running = started;
      void started.then(() => {
        if (this.#running === started) this.#running = undefined;
      });
    }
    const finished = await within(running, this.#timeoutMs);
    if (finished) return this.#snapshot;
    return { gauges: this.#snapshot.gauges, reachable: false, error: `the database did not answer within ${this.#timeoutMs} ms` };
  }

  async #start(): Promise<void> {
    try {
      const gauges = await this.#read();
      this.#snapshot = { gauges, reachable: true };
    } catch (error) {
      this.#snapshot = { gauges: this.#snapshot.gauges, reachable: false, error: describeError(error) };
    }
    this.#endedAt = performance.now();
  }
}

/** For a store without `gauges()`: its exact (full count) stats, pending being every unpublished message. */
async function gaugesFromStats(source: GaugeSource): Promise<OutboxGauges> {
  const stats = await source.stats();
  return { pending: stats.pending + stats.scheduled + stats.inFlight, pendingExact: true, dead: stats.dead, oldestPendingAgeSeconds: stats.oldestPendingAgeSeconds };
}

/** Whether `work` (which never rejects) ended within `ms`; the timer does not keep the process alive. */
function within(work: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    void work.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
