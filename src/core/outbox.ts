import { OutboxerError } from './errors.js';
import type { NewOutboxMessage, OutboxMessageInput } from './message.js';
import type { CommitNotifier, OutboxStore, OutboxWriter, OutgoingValidator, Publisher } from './ports.js';
import type { EnqueueInstrumentation } from './ports/enqueue-instrumentation.js';
import { isOutboxTransaction } from './ports/outbox-transaction.js';
import { Relay, type StoreForRelay } from './relay.js';
import type { Routes } from './routes.js';
import { type OutboxOptions, resolveOutboxOptions } from './outbox-options.js';
import type { RelayOptionsInput } from './relay-options.js';
import { validateMessage, type MessageLimits } from './validate-message.js';

export { DEFAULT_MAX_PAYLOAD_BYTES, type OutboxOptions } from './outbox-options.js';

/**
 * Handles on which every statement commits on its own: a `pg` Pool, or a database handle that runs
 * transactions (`fromPgPool`, `fromPglite`, a PGlite instance). A message enqueued on one would be stored
 * even when the caller's transaction rolls back.
 */
export type AutocommitHandle =
  | { readonly totalCount: number; readonly idleCount: number; connect(): unknown }
  | { getConnection(...args: never): unknown; end(...args: never): unknown; releaseConnection(...args: never): unknown }
  | { transaction(work: never): Promise<unknown>; close(): Promise<void> };

/** Makes `enqueue(pool, …)` a type error that says what to pass instead. */
export type RefuseAutocommit<T> = T extends AutocommitHandle
  ? { readonly 'enqueue needs a client inside BEGIN/COMMIT, or the tx of outbox.transaction(db, work), not a pool': never }
  : unknown;

/** Anything that runs work in a database transaction: `PgDatabase` (fromPgPool, fromPglite) is one. */
export interface TransactionRunner<Tx> {
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

/** What `Outbox` needs from a store: the writer role for `enqueue`, and for the relays it makes (`createRelay`) what `Relay` needs. */
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
  readonly #commitNotifier: CommitNotifier | undefined;
  readonly #registry: OutgoingValidator | undefined;
  readonly #instrumentation: EnqueueInstrumentation | undefined;
  readonly #routes: Routes;

  constructor(store: Store & StoreForOutbox<Tx>, options: OutboxOptions = {}) {
    const resolved = resolveOutboxOptions(options);
    this.store = store;
    this.#commitNotifier = resolved.commitNotifier;
    this.#registry = resolved.registry;
    this.#instrumentation = resolved.instrumentation;
    this.#routes = resolved.routes;
    this.limits = Object.freeze({ maxPayloadBytes: resolved.maxPayloadBytes });
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
    const instrumentation = this.#instrumentation;
    if (instrumentation === undefined || messages.length === 0) return [...(await this.#insert(tx, messages)).ids];
    let stored: readonly string[] | undefined;
    let calls = 0;
    await instrumentation.enqueue(messages, async (prepared) => {
      if (++calls > 1 || prepared.length !== messages.length) {
        throw new OutboxerError(
          'OUTBOXER_INVALID_OPTION',
          `the outbox instrumentation must call store once with the ${messages.length} message(s) it was given; nothing more was stored`,
        );
      }
      const { validated, ids } = await this.#insert(tx, prepared);
      stored = ids;
      return validated.map((message, i) => ({ id: message.id, storedAs: ids[i] as string }));
    });
    if (stored === undefined)
      throw new OutboxerError('OUTBOXER_INVALID_OPTION', 'the outbox instrumentation resolved without calling store: nothing was stored');
    return [...stored];
  }

  async #insert(tx: Tx, messages: readonly OutboxMessageInput[]): Promise<{ validated: readonly NewOutboxMessage[]; ids: readonly string[] }> {
    const checked = this.#registry === undefined ? messages : await Promise.all(messages.map((m) => this.#checkSchema(m)));
    const validated = checked.map((message) => validateMessage(message, this.limits));
    const named = new Set(messages.flatMap((message, index) => (message.destination === undefined ? [] : [index])));
    const { rows, firstRows } = this.#routes.expand(validated, named);
    const ids = await this.store.insert(tx, rows);
    return { validated, ids: firstRows.map((row) => ids[row] as string) };
  }

  /**
   * Runs a transaction and, once it committed, calls `notifyCommitted()`: the relays of this outbox read at once,
   * and with a `commitNotifier` so do relays elsewhere.
   * - `outbox.transaction(() => ormTransaction)`: runs your ORM's own transaction (`() => db.transaction().execute(...)`,
   *   `() => prisma.$transaction(...)`) and wakes the relays after it resolved; enqueue inside it through the ORM's
   *   adapter (`fromKysely(trx)`, ...). A nested transaction's wake-up is only early, never lost: relays then poll.
   * - `outbox.transaction(runner, work)`: runs `work` in a transaction of `runner` (a `PgDatabase` from
   *   `fromPgPool`/`fromPglite`, or anything with `transaction(work)`).
   */
  transaction<T>(run: () => Promise<T>): Promise<T>;
  transaction<T, X extends Tx = Tx>(runner: TransactionRunner<X>, work: (tx: X) => Promise<T>): Promise<T>;
  async transaction<T, X extends Tx = Tx>(runner: TransactionRunner<X> | (() => Promise<T>), work?: (tx: X) => Promise<T>): Promise<T> {
    let result: T;
    if (work === undefined) {
      if (typeof runner !== 'function')
        throw new OutboxerError(
          'OUTBOXER_INVALID_OPTION',
          'outbox.transaction takes a function that runs your transaction, or a runner and the work to run in it',
        );
      result = await runner();
    } else {
      result = await (runner as TransactionRunner<X>).transaction(work);
    }
    this.notifyCommitted();
    return result;
  }

  async #checkSchema(message: OutboxMessageInput): Promise<OutboxMessageInput> {
    const where = message.id === undefined ? undefined : `message ${message.id}`;
    const payload = await (this.#registry as OutgoingValidator).validateOutgoing(message.type, message.payload, where);
    return { ...message, payload };
  }

  /**
   * Call after your transaction committed: relays in this process read at once instead of at their
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
    for (const destination of Object.values(relay.options.destinations)) this.#publishers.add(destination.publisher);
    return relay;
  }

  /**
   * Shuts down what this outbox was handed: stops every relay made by `createRelay` (publishes in flight are
   * confirmed and their outcomes written, their partitions given back), then closes their publishers and the
   * `commitNotifier`. The store and the pools stay the caller's: end them afterwards.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    await Promise.all([...this.#relays].map((relay) => relay.stop()));
    await Promise.all([...this.#publishers].map((publisher) => publisher.close()));
    await this.#commitNotifier?.close();
  }
}

/** The run-time half of `RefuseAutocommit`, for JavaScript callers and values typed loosely. */
function refuseAutocommit(tx: unknown): void {
  if (typeof tx !== 'object' || tx === null || isOutboxTransaction(tx)) return;
  // `in` only: the caller's transaction object is never read or called
  // a better-sqlite3 connection is the transaction itself: its store checks `inTransaction` at the insert
  if ('inTransaction' in tx) return;
  const pool = ('connect' in tx && 'totalCount' in tx && 'idleCount' in tx) || ('getConnection' in tx && 'end' in tx);
  const database = 'transaction' in tx && 'close' in tx;
  if (!pool && !database) return;
  throw new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `enqueue was given ${pool ? 'a connection pool' : 'a database handle'}, on which each statement commits on its own: the message would be stored even if your transaction rolled back. ` +
      'Pass a client inside BEGIN ... COMMIT (pg: await pool.connect(); mysql2: await pool.getConnection() then beginTransaction()), or use outbox.transaction(db, async (tx) => outbox.enqueue(tx, message)).',
  );
}
