import type pg from 'pg';
import type { RelayContender } from '../contenders/contender.js';
import type { ConfirmClock } from '../measure/confirm-clock.js';

/**
 * How a writer commits: `wake` is its own BEGIN/COMMIT then the contender's after-commit call (outboxer:
 * `notifyCommitted()`); `transaction` is the contender's own transaction runner (outboxer: `outbox.transaction`,
 * the hand-off under engine v1, a wake-up under v2).
 */
export type WriterPath = 'wake' | 'transaction';

/** One round's outcome: the measured message's commit-returned → confirm latency, undefined if not confirmed in time. */
export interface LateRound {
  readonly latencyMs: number | undefined;
  /** The other session's message (b) was confirmed before the measured one (a) committed. */
  readonly otherConfirmed: boolean;
  /** Same key only: the message committed on a's connection right after a (c) was confirmed. */
  readonly followUpConfirmed: boolean;
}

/** Awaits `promise` for at most `ms`; undefined after that. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Scenario (h)'s writers: two sessions on their own connections, one message per transaction, each round
 * confirmed before the next starts. Message numbers only grow, and choose the keys (`k-(n mod keys)`): in a
 * same-key round b, a and c get n, n + keys and n + 2 keys, so the order the relay may publish them in (b
 * committed first; c was written after a committed) is increasing, as the key-order watch expects.
 */
export class LateCommitRounds {
  readonly #contender: RelayContender;
  readonly #clock: ConfirmClock;
  readonly #sessions: readonly [a: pg.PoolClient, b: pg.PoolClient];
  readonly #keys: number;
  readonly #boundMs: number;
  #next = 0;

  constructor(contender: RelayContender, clock: ConfirmClock, sessions: readonly [pg.PoolClient, pg.PoolClient], keys: number, boundMs: number) {
    if (keys < 2) throw new Error(`scenario (h) needs at least 2 keys, got ${keys}`);
    this.#contender = contender;
    this.#clock = clock;
    this.#sessions = sessions;
    this.#keys = keys;
    this.#boundMs = boundMs;
  }

  /** A plain single commit on session A: its commit-to-confirm latency. */
  async inOrder(path: WriterPath): Promise<number | undefined> {
    const { confirmed } = await this.#commitOne(this.#sessions[0], path, this.#next++);
    const committedAt = performance.now();
    const at = await within(confirmed, this.#boundMs);
    return at === undefined ? undefined : at - committedAt;
  }

  /**
   * A BEGINs and enqueues a (its seq is drawn), B commits b (another key, or a's) and is waited for, then A
   * commits: a's latency. With the same key, A then commits c at once, which must not overtake a.
   */
  async late(path: WriterPath, sameKey: boolean): Promise<LateRound> {
    const first = this.#next;
    const [a, b, c] = sameKey ? [first + this.#keys, first, first + 2 * this.#keys] : [first, first + 1, undefined];
    this.#next = sameKey ? first + 2 * this.#keys + 1 : first + 2;
    const [sessionA, sessionB] = this.#sessions;
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // promises travel wrapped in `{ confirmed }`: resolving with a bare promise would adopt it and wait for it
    let enqueued = (_a: { confirmed: Promise<number> }): void => undefined;
    const aEnqueued = new Promise<{ confirmed: Promise<number> }>((resolve) => {
      enqueued = resolve;
    });
    const committedA = this.#transaction(sessionA, path, async (tx) => {
      enqueued({ confirmed: this.#clock.confirmation(await this.#contender.enqueue(tx, a)) });
      await gate;
    });
    let otherConfirmed: number | undefined;
    let aConfirmed: Promise<number>;
    try {
      ({ confirmed: aConfirmed } = await Promise.race([
        aEnqueued,
        committedA.then(() => Promise.reject(new Error('session A committed before its enqueue returned'))),
      ]));
      const other = await this.#commitOne(sessionB, path, b);
      otherConfirmed = await within(other.confirmed, this.#boundMs);
    } finally {
      release();
    }
    await committedA;
    const committedAt = performance.now();
    const followUp = c === undefined ? undefined : await this.#commitOne(sessionA, path, c);
    const at = await within(aConfirmed, this.#boundMs);
    const followUpAt = followUp === undefined ? undefined : await within(followUp.confirmed, this.#boundMs);
    return {
      latencyMs: at === undefined ? undefined : at - committedAt,
      otherConfirmed: otherConfirmed !== undefined,
      followUpConfirmed: c === undefined || followUpAt !== undefined,
    };
  }

  /** Commits message `n` alone; its confirmation is asked for inside the transaction, before it can be published. */
  async #commitOne(client: pg.PoolClient, path: WriterPath, n: number): Promise<{ confirmed: Promise<number> }> {
    return this.#transaction(client, path, async (tx) => ({ confirmed: this.#clock.confirmation(await this.#contender.enqueue(tx, n)) }));
  }

  async #transaction<T>(client: pg.PoolClient, path: WriterPath, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    const contender = this.#contender;
    if (path === 'transaction') {
      if (contender.transaction === undefined) throw new Error(`${contender.name} has no transaction runner`);
      return contender.transaction(client, work);
    }
    await client.query('BEGIN');
    try {
      const result = await work(client);
      await client.query('COMMIT');
      contender.committed();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
