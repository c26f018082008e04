import type { PublishError } from '../../core/errors.js';

interface Waiter {
  resolve(acknowledged: number): void;
  reject(error: unknown): void;
}

/**
 * `WAIT` for the writes of one connection, shared: WAIT blocks until every write this connection sent before it has
 * reached the replicas, so one WAIT confirms every XADD that was answered before it was sent. XADDs answered while a
 * WAIT runs join the next one. One per connection (a WAIT on a new connection would confirm nothing it sent).
 */
export class ReplicaWaits {
  readonly #send: () => Promise<number> | undefined;
  readonly #lost: () => PublishError;
  #next: Waiter[] = [];
  #running = false;

  /** `send` sends `WAIT n timeout` on the connection, or returns undefined when that connection is gone. */
  constructor(send: () => Promise<number> | undefined, lost: () => PublishError) {
    this.#send = send;
    this.#lost = lost;
  }

  /** How many replicas acknowledged every write this connection made so far. */
  acknowledged(): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.#next.push({ resolve, reject });
      this.#flush();
    });
  }

  #flush(): void {
    if (this.#running || this.#next.length === 0) return;
    const batch = this.#next;
    this.#next = [];
    const sending = this.#send();
    if (sending === undefined) {
      const lost = this.#lost();
      for (const waiter of batch) waiter.reject(lost);
      return;
    }
    this.#running = true;
    sending
      .then(
        (count) => {
          for (const waiter of batch) waiter.resolve(count);
        },
        (error: unknown) => {
          for (const waiter of batch) waiter.reject(error);
        },
      )
      .finally(() => {
        this.#running = false;
        this.#flush();
      });
  }
}
