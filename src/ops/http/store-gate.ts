import type { Logger } from '../../core/ports.js';
import { OpsHttpError } from './ops-http-error.js';

/** How many store calls the server makes at once, and how many more may wait for a turn, and for how long. */
export interface StoreGateLimits {
  /** Store calls running at once: the connections the server may hold. */
  readonly concurrency: number;
  /** Calls waiting for a turn; one more is refused at once. */
  readonly queue: number;
  /** How long a call waits for its turn before it is refused. */
  readonly maxWaitMs: number;
}

/** 2 at once, 16 waiting, 5 s at most: a dashboard's refresh (4 reads) waits its turn; a flood is refused. */
export const DEFAULT_STORE_GATE_LIMITS: StoreGateLimits = Object.freeze({ concurrency: 2, queue: 16, maxWaitMs: 5000 });

/** The `Retry-After` of a refusal, in seconds. */
const RETRY_AFTER_S = 1;
/** At most one log line about refusals in this time; the next one counts those in between. */
const SHED_LOG_INTERVAL_MS = 10_000;

interface Waiter {
  readonly enter: () => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Bounds what the HTTP server of operations asks of the store, whatever its clients do: at most `concurrency` calls
 * run at once (so it never holds more connections than that), at most `queue` wait for a turn (first come, first
 * served) and each for at most `maxWaitMs`. A call beyond that is refused at once with 503 `OUTBOXER_BUSY` and
 * `Retry-After`, never queued behind the others, and a warning says so (at most one line every 10 s, with the count).
 */
export class StoreGate {
  readonly #limits: StoreGateLimits;
  readonly #logger: Logger;
  readonly #waiting: Waiter[] = [];
  #running = 0;
  #shedSinceLog = 0;
  #loggedAt = Number.NEGATIVE_INFINITY;

  constructor(limits: StoreGateLimits, logger: Logger) {
    this.#limits = limits;
    this.#logger = logger;
  }

  /** Runs `call` when a turn is free; throws OpsHttpError 503 `OUTBOXER_BUSY` when it cannot have one. */
  async run<T>(call: () => Promise<T>): Promise<T> {
    await this.#enter();
    try {
      return await call();
    } finally {
      this.#leave();
    }
  }

  #enter(): Promise<void> {
    if (this.#running < this.#limits.concurrency) {
      this.#running += 1;
      return Promise.resolve();
    }
    if (this.#waiting.length >= this.#limits.queue) return Promise.reject(this.#shed('queue full'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        enter: resolve,
        timer: setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
          reject(this.#shed('waited too long'));
        }, this.#limits.maxWaitMs),
      };
      this.#waiting.push(waiter);
    });
  }

  /** Hands the turn to the first waiter, if any (the running count stays), or frees it. */
  #leave(): void {
    const next = this.#waiting.shift();
    if (next === undefined) {
      this.#running -= 1;
      return;
    }
    clearTimeout(next.timer);
    next.enter();
  }

  #shed(why: 'queue full' | 'waited too long'): OpsHttpError {
    this.#shedSinceLog += 1;
    const now = performance.now();
    if (now - this.#loggedAt >= SHED_LOG_INTERVAL_MS) {
      const { concurrency, queue, maxWaitMs } = this.#limits;
      this.#logger.warn(
        { refused: this.#shedSinceLog, why, concurrency, queue, maxWaitMs, waiting: this.#waiting.length },
        'ops http server busy: store requests refused with 503 OUTBOXER_BUSY',
      );
      this.#loggedAt = now;
      this.#shedSinceLog = 0;
    }
    const { concurrency, queue } = this.#limits;
    return new OpsHttpError(
      503,
      'OUTBOXER_BUSY',
      `the server runs at most ${concurrency} store requests at once with ${queue} waiting, and is at that bound; retry after ${RETRY_AFTER_S} s`,
      { 'Retry-After': String(RETRY_AFTER_S) },
    );
  }
}
