import { describeError } from '../../core/errors.js';
import type { OutboxGauges, OutboxOperator } from '../../core/ports.js';

/** What `observeStore` reads: the store's cheap `gauges()`, or its `stats()` (a full count) when it has none. */
export type GaugeSource = Pick<OutboxOperator, 'gauges' | 'stats'>;

/** A scrape waits at most this long for the database; then it serves the last values (the age grown) and reports it unreachable. */
export const GAUGE_READ_TIMEOUT_MS = 1000;

/** The store's gauges as one scrape sees them. */
export interface StoreSnapshot {
  /**
   * The last values read, however old; undefined before the first read that succeeded. While unreachable, the
   * oldest pending age is the one read plus the time since that read (see `grownSince`).
   */
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
 * whenever it ends. While the database is unreachable, the oldest pending age keeps growing from the last read
 * (`grownSince`) rather than freezing, so an age alert still fires when the relays lose the database.
 */
export class StoreGaugeReader {
  readonly #read: () => Promise<OutboxGauges>;
  readonly #maxAgeMs: number;
  readonly #timeoutMs: number;
  #snapshot: StoreSnapshot = { gauges: undefined, reachable: false };
  /** performance.now() of the last read that ended (succeeded or failed); none yet. */
  #endedAt: number | undefined;
  /** performance.now() of the last read that succeeded: when `#snapshot.gauges` were read. */
  #readAt = 0;
  #running: Promise<void> | undefined;

  constructor(source: GaugeSource, maxAgeMs: number, timeoutMs = GAUGE_READ_TIMEOUT_MS) {
    const gauges = source.gauges?.bind(source);
    this.#read = gauges ?? (() => gaugesFromStats(source));
    this.#maxAgeMs = maxAgeMs;
    this.#timeoutMs = timeoutMs;
  }

  /** The snapshot for a scrape now: cached if fresh enough, otherwise read (bounded by the timeout). */
  async snapshot(): Promise<StoreSnapshot> {
    const snapshot = await this.#latest();
    if (snapshot.reachable || snapshot.gauges === undefined) return snapshot;
    return { ...snapshot, gauges: grownSince(snapshot.gauges, performance.now() - this.#readAt) };
  }

  async #latest(): Promise<StoreSnapshot> {
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
    return { ...this.#snapshot, reachable: false, error: `the database did not answer within ${this.#timeoutMs} ms` };
  }

  async #start(): Promise<void> {
    try {
      const gauges = await this.#read();
      this.#snapshot = { gauges, reachable: true };
      this.#readAt = performance.now();
    } catch (error) {
      this.#snapshot = { gauges: this.#snapshot.gauges, reachable: false, error: describeError(error) };
    }
    this.#endedAt = performance.now();
  }
}

/**
 * The gauges read `elapsedMs` ago, as far as they can be known without the database: the oldest pending message
 * is that much older, since only a publish (which needs the database) could remove it; pending and dead as read.
 * A table that had nothing pending stays at 0: a message enqueued since is at most `elapsedMs` old, and whether
 * one was is not known (the relays' own gauges tell that no relay publishes: outboxer_relays_alive).
 */
export function grownSince(gauges: OutboxGauges, elapsedMs: number): OutboxGauges {
  if (gauges.oldestPendingAgeSeconds === 0) return gauges;
  return { ...gauges, oldestPendingAgeSeconds: gauges.oldestPendingAgeSeconds + Math.max(0, elapsedMs) / 1000 };
}

/** For a store without `gauges()`: its exact (full count) stats, pending being every unpublished message. */
async function gaugesFromStats(source: GaugeSource): Promise<OutboxGauges> {
  const stats = await source.stats();
  return { pending: stats.pending + stats.scheduled, pendingExact: true, dead: stats.dead, oldestPendingAgeSeconds: stats.oldestPendingAgeSeconds };
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
