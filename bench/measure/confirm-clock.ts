import type { OutboxMessage, Publisher } from '../../src/index.js';
import { LatencyHistogram } from './latency-histogram.js';

/**
 * Commit-to-confirm latency and confirm counting for any contender. The writer calls `committed(id)`
 * right after its COMMIT returned; `wrap(publisher)` notes when each publish resolved (the broker's
 * confirmation). Both happen in this process, on one monotonic clock; either order is handled.
 */
export class ConfirmClock {
  readonly latencies = new LatencyHistogram();
  readonly #committedAt = new Map<string, number>();
  readonly #confirmedAt = new Map<string, number>();
  #confirms = 0;
  #failures = 0;
  #lastError: string | undefined;
  #waiters: { target: number; resolve: () => void }[] = [];
  readonly #idWaiters = new Map<string, (at: number) => void>();
  /** Only measure latency for ids the writers reported (a pre-loaded backlog has none). */
  timing = false;

  get confirms(): number {
    return this.#confirms;
  }

  get failures(): number {
    return this.#failures;
  }

  get lastError(): string | undefined {
    return this.#lastError;
  }

  committed(id: string): void {
    // Confirmed before the writer saw its COMMIT return: the latency is (at most) zero.
    if (this.#confirmedAt.delete(id)) this.latencies.record(0);
    else this.#committedAt.set(id, performance.now());
  }

  confirmed(id: string): void {
    const now = performance.now();
    this.#confirms++;
    this.#idWaiters.get(id)?.(now);
    this.#idWaiters.delete(id);
    if (this.timing) {
      const committed = this.#committedAt.get(id);
      if (committed === undefined) this.#confirmedAt.set(id, now);
      else {
        this.#committedAt.delete(id);
        this.latencies.record(now - committed);
      }
    }
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.#confirms < waiter.target) return true;
      waiter.resolve();
      return false;
    });
  }

  failed(error: unknown): void {
    this.#failures++;
    this.#lastError = error instanceof Error ? error.message : String(error);
  }

  /**
   * Resolves with the time (`performance.now()`) `id` is confirmed at. Ask before the message can be published
   * (inside its transaction): a confirm that came earlier is not remembered.
   */
  confirmation(id: string): Promise<number> {
    return new Promise((resolve) => this.#idWaiters.set(id, resolve));
  }

  /** Resolves once `target` confirms were counted, or after `timeoutMs` (then `reached` is false). */
  async reach(target: number, timeoutMs: number): Promise<boolean> {
    if (this.#confirms >= target) return true;
    let timer: NodeJS.Timeout | undefined;
    const reached = await Promise.race([
      new Promise<boolean>((resolve) => this.#waiters.push({ target, resolve: () => resolve(true) })),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return reached;
  }

  /** Commits whose confirmation has not been seen (still in the outbox, or lost). */
  get unconfirmed(): number {
    return this.#committedAt.size;
  }

  wrap(publisher: Publisher): Publisher {
    return {
      name: publisher.name,
      get capabilities() {
        return publisher.capabilities;
      },
      publish: async (message: OutboxMessage) => {
        try {
          await publisher.publish(message);
        } catch (error) {
          this.failed(error);
          throw error;
        }
        this.confirmed(message.id);
      },
      close: () => publisher.close(),
    };
  }
}
