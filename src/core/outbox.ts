import { ConfigurationError, OutboxerError } from './errors.js';
import type { OutboxMessageInput } from './message.js';
import { randomUUID } from 'node:crypto';
import type { OutboxMessage } from './message.js';
import type { CommitNotifier, HandoffLease, OutboxStore, OutboxWriter, OutgoingValidator, Publisher } from './ports.js';
import { Relay, type StoreForRelay } from './relay.js';
import type { RelayOptionsInput } from './relay-options.js';
import { validateMessage, type MessageLimits } from './validate-message.js';

export interface OutboxOptions {
  /** Largest body accepted at enqueue, in the bytes that will be published. Default 256 KiB; keep it at or below your broker's limit. */
  readonly maxPayloadBytes?: number;
  /** Also wakes relays in other processes on `notifyCommitted()` (e.g. `pgCommitNotifier`). */
  readonly commitNotifier?: CommitNotifier;
  /** Validates every payload against the schema of its type before it is stored (e.g. a `MessageRegistry`). */
  readonly registry?: OutgoingValidator;
  /**
   * `transaction()` hands its messages to the in-process relay only while at most this many of its calls
   * are open at once (counted as each starts); under more write concurrency they take the claim path, whose batched claims and marks
   * cost the database less per message than a leasing insert per transaction. Default 16; 0 turns the
   * hand-off off.
   */
  readonly maxConcurrentHandoffs?: number;
}

export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;
export const DEFAULT_MAX_CONCURRENT_HANDOFFS = 16;

/**
 * Handles on which every statement commits on its own: a `pg` Pool, or a database handle that runs
 * transactions (`fromPgPool`, `fromPglite`, a PGlite instance). A message enqueued on one would be stored
 * even when the caller's transaction rolls back.
 */
export type AutocommitHandle =
  | { readonly totalCount: number; readonly idleCount: number; connect(): unknown }
  | { transaction(work: never): Promise<unknown>; close(): Promise<void> };

/** Makes `enqueue(pool, …)` a type error that says what to pass instead. */
export type RefuseAutocommit<T> = T extends AutocommitHandle
  ? { readonly 'enqueue needs a client inside BEGIN/COMMIT, or the tx of outbox.transaction(db, work), not a pool': never }
  : unknown;

/** Anything that runs work in a database transaction: `PgDatabase` (fromPgPool, fromPglite) is one. */
export interface TransactionRunner<Tx> {
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

interface Handoff {
  readonly lease: HandoffLease;
  readonly startedAt: number;
  readonly leased: OutboxMessage[];
  unleased: number;
}

/**
 * What `Outbox` needs from a store: the writer role for `enqueue`, and for the relays it makes
 * (`createRelay`, and the hand-off, whose leases those relays mark) what `Relay` needs, on the same store.
 */
export type StoreForOutbox<Tx> = OutboxWriter<Tx> & StoreForRelay;

/**
 * The producer side: validates messages and writes them inside the caller's transaction.
 * It never begins, commits or rolls back that transaction. `Store` is the store it was given, so
 * `outbox.store` keeps that store's full type.
 */
export class Outbox<Tx, Store extends StoreForOutbox<Tx> = OutboxStore<Tx>> {
  readonly store: Store;
  readonly limits: MessageLimits;
  readonly #relays = new Set<Relay>();
  /** Handed over with `createRelay`: `close()` closes them once their relays stopped. */
  readonly #publishers = new Set<Publisher>();
  #closed: Promise<void> | undefined;
  /** Transactions whose messages are being leased to a relay of this outbox: `close()` lets them finish first. */
  readonly #handoffTransactions = new Set<Promise<unknown>>();
  readonly #commitNotifier: CommitNotifier | undefined;
  readonly #registry: OutgoingValidator | undefined;
  readonly #handoffs = new WeakMap<object, Handoff>();
  readonly #maxConcurrentHandoffs: number;
  #openTransactions = 0;

  constructor(store: Store & StoreForOutbox<Tx>, options: OutboxOptions = {}) {
    const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    if (!Number.isInteger(maxPayloadBytes) || maxPayloadBytes < 1) {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'maxPayloadBytes must be a whole number of bytes >= 1');
    }
    const maxConcurrentHandoffs = options.maxConcurrentHandoffs ?? DEFAULT_MAX_CONCURRENT_HANDOFFS;
    if (!Number.isInteger(maxConcurrentHandoffs) || maxConcurrentHandoffs < 0) {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'maxConcurrentHandoffs must be a whole number >= 0 (0 turns the hand-off off)');
    }
    this.#maxConcurrentHandoffs = maxConcurrentHandoffs;
    this.store = store;
    this.#commitNotifier = options.commitNotifier;
    this.#registry = options.registry;
    this.limits = Object.freeze({ maxPayloadBytes });
  }

  /**
   * Stores one message in the caller's open transaction; returns its id. `tx` is a client inside
   * BEGIN ... COMMIT, or the `tx` of `outbox.transaction`; a pool is refused (`OUTBOXER_NOT_IN_TRANSACTION`).
   */
  async enqueue<T extends Tx>(tx: T & RefuseAutocommit<T>, message: OutboxMessageInput): Promise<string> {
    const [id] = await this.enqueueMany(tx, [message]);
    return id as string;
  }

  /**
   * Stores messages in the caller's open transaction, in order (same-key messages keep it); returns their
   * ids. A message whose `idempotencyKey` was already used within the store's idempotency window is not
   * stored again: its slot in the result holds the id of the message first stored under that key.
   */
  async enqueueMany<T extends Tx>(tx: T & RefuseAutocommit<T>, messages: readonly OutboxMessageInput[]): Promise<string[]> {
    refuseAutocommit(tx);
    const checked = this.#registry === undefined ? messages : await Promise.all(messages.map((m) => this.#checkSchema(m)));
    const validated = checked.map((message) => validateMessage(message, this.limits));
    const handoff = typeof tx === 'object' && tx !== null ? this.#handoffs.get(tx) : undefined;
    if (handoff === undefined || this.store.insertLeased === undefined) return [...(await this.store.insert(tx, validated))];
    const result = await this.store.insertLeased(tx, validated, handoff.lease);
    handoff.leased.push(...result.leased);
    handoff.unleased += result.ids.length - result.leased.length;
    return [...result.ids];
  }

  /**
   * Runs `work` in a transaction of `runner` (a `PgDatabase` from `fromPgPool`/`fromPglite`, or anything with
   * `transaction(work)`) and, once it committed, hands the messages enqueued in it straight to a relay of this
   * outbox running in this process: they are leased to it as they are inserted, so it publishes them without a
   * claim query. Messages whose key is still busy with an earlier message take the normal claim path, and so
   * does everything while more than `maxConcurrentHandoffs` calls are open (see that option).
   */
  async transaction<T>(runner: TransactionRunner<Tx>, work: (tx: Tx) => Promise<T>): Promise<T> {
    this.#openTransactions++;
    try {
      return await this.#transaction(runner, work);
    } finally {
      this.#openTransactions--;
    }
  }

  async #transaction<T>(runner: TransactionRunner<Tx>, work: (tx: Tx) => Promise<T>): Promise<T> {
    const relay = this.#openTransactions > this.#maxConcurrentHandoffs ? undefined : this.#handoffRelay();
    if (relay === undefined || this.store.insertLeased === undefined) {
      const result = await runner.transaction(work);
      this.notifyCommitted();
      return result;
    }
    const handoff: Handoff = {
      lease: { owner: relay.options.owner, token: randomUUID(), leaseMs: relay.options.leaseMs },
      startedAt: performance.now(),
      leased: [],
      unleased: 0,
    };
    const committed = runner.transaction(async (tx) => {
      if (typeof tx === 'object' && tx !== null) this.#handoffs.set(tx, handoff);
      try {
        return await work(tx);
      } finally {
        if (typeof tx === 'object' && tx !== null) this.#handoffs.delete(tx);
      }
    });
    this.#handoffTransactions.add(committed);
    try {
      const result = await committed;
      relay.handoff({ token: handoff.lease.token, startedAt: handoff.startedAt, messages: handoff.leased });
      if (handoff.unleased > 0) this.notifyCommitted();
      return result;
    } finally {
      this.#handoffTransactions.delete(committed);
    }
  }

  #handoffRelay(): Relay | undefined {
    if (this.#closed !== undefined) return undefined;
    for (const relay of this.#relays) if (relay.acceptsHandoff) return relay;
    return undefined;
  }

  async #checkSchema(message: OutboxMessageInput): Promise<OutboxMessageInput> {
    const payload = await (this.#registry as OutgoingValidator).validateOutgoing(message.type, message.payload);
    return { ...message, payload };
  }

  /**
   * Call after your transaction committed: relays in this process claim at once instead of at their
   * next poll, and, with a `commitNotifier`, so do relays elsewhere. Never call it before the commit.
   */
  notifyCommitted(): void {
    for (const relay of this.#relays) relay.wake();
    this.#commitNotifier?.notify();
  }

  /**
   * A relay over this outbox's store; `notifyCommitted()` wakes it. The outbox takes the publisher over:
   * `close()` stops the relay and then closes the publisher.
   */
  createRelay(publisher: Publisher, options: RelayOptionsInput = {}): Relay {
    if (this.#closed !== undefined) throw new OutboxerError('OUTBOXER_CLOSED', 'createRelay was called after outbox.close(); make a new Outbox');
    const relay = new Relay(this.store, publisher, options);
    this.#relays.add(relay);
    this.#publishers.add(publisher);
    return relay;
  }

  /**
   * Shuts down what this outbox was handed: lets open `transaction()` calls hand their messages over,
   * stops every relay made by `createRelay` (publishes in flight are confirmed and marked, the rest of
   * their claims released), then closes their publishers and the `commitNotifier`. Transactions begun
   * after it take the claim path. The store and the pools stay the caller's: end them afterwards.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    // messages leased to a relay by a transaction still open are handed to it before it stops
    await Promise.allSettled([...this.#handoffTransactions]);
    await Promise.all([...this.#relays].map((relay) => relay.stop()));
    await Promise.all([...this.#publishers].map((publisher) => publisher.close()));
    await this.#commitNotifier?.close();
  }
}

/** The run-time half of `RefuseAutocommit`, for JavaScript callers and values typed loosely. */
function refuseAutocommit(tx: unknown): void {
  if (typeof tx !== 'object' || tx === null) return;
  // `in` only: the caller's transaction object is never read or called
  const pool = 'connect' in tx && 'totalCount' in tx && 'idleCount' in tx;
  const database = 'transaction' in tx && 'close' in tx;
  if (!pool && !database) return;
  throw new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `enqueue was given ${pool ? 'a connection pool' : 'a database handle'}, on which each statement commits on its own: the message would be stored even if your transaction rolled back. ` +
      'Pass a client inside BEGIN ... COMMIT (const client = await pool.connect()), or use outbox.transaction(db, async (tx) => outbox.enqueue(tx, message)).',
  );
}
