import { ConfigurationError, describeError, MessageValidationError } from '../core/errors.js';
import { retryDelayMs } from '../core/retry-policy.js';
import { resolveInboxOptions, type InboxOptions, type InboxOptionsInput } from './inbox-options.js';
import type { InboxClaim, InboxEntryRef, InboxStore } from '../core/ports/inbox-store.js';
import { type BatchItem, claimAll, planBatch } from './inbox-batch.js';
import type { MessageHandler } from './message-registry.js';
import { identify, payloadOf, type RawDelivery, type ReceivedMessage } from './received-message.js';

/** What the inbox decided; the broker consumer acts on it (ack, dead-letter, retry later). */
export type HandleOutcome =
  /** The handler ran and its writes committed together with the inbox entry: ack. */
  | { readonly status: 'processed'; readonly attempts: number }
  /** Already processed (or dead) for this consumer: nothing ran; ack. */
  | { readonly status: 'duplicate'; readonly state: 'processed' | 'dead' }
  /** Parked in the inbox with its reason: take it off the queue (ack, reject to a dead-letter exchange, term). */
  | { readonly status: 'dead'; readonly attempts: number; readonly reason: string }
  /** The handler failed and everything rolled back; handle it again after `retryInMs`. */
  | { readonly status: 'retry'; readonly attempts: number; readonly error: string; readonly retryInMs: number }
  /** No usable id or type: nothing could be recorded; reject it at the broker. */
  | { readonly status: 'malformed'; readonly reason: string };

/**
 * Effectively-once handling: the handler's writes and the inbox entry (consumer, message id) commit in one
 * transaction; a message already processed by this consumer is skipped. A failure rolls everything back,
 * then the attempt and its error are recorded outside that transaction; after `retry.maxAttempts` (or at
 * once for a MessageValidationError: unknown type, invalid payload) the entry is dead with its reason.
 */
export class Inbox<Tx> {
  readonly options: InboxOptions<Tx>;
  readonly store: InboxStore<Tx>;

  constructor(store: InboxStore<Tx>, options: InboxOptionsInput<Tx>) {
    this.store = store;
    this.options = resolveInboxOptions(options);
  }

  get consumer(): string {
    return this.options.consumer;
  }

  /** Handles a rebuilt message with `handler`, or with the registry's handler for its type. */
  async handle(message: ReceivedMessage, handler?: MessageHandler<Tx>): Promise<HandleOutcome> {
    const entry = this.#entry(message);
    let run: (tx: Tx) => Promise<void>;
    try {
      run = await this.#prepare(message, handler);
    } catch (error) {
      if (error instanceof ConfigurationError) throw error;
      return this.#fail(entry, error);
    }
    const timing: HandlerTiming = {};
    try {
      const claim = await this.store.transaction(async (tx) => {
        const claimed = await this.store.claim(tx, entry);
        if (claimed.state === 'claimed') await timed(timing, () => run(tx));
        return claimed;
      });
      if (claim.state !== 'claimed') {
        this.#emit('onDuplicate', { ...entry, state: claim.state });
        return { status: 'duplicate', state: claim.state };
      }
      this.#emit('onProcessed', { ...entry, attempts: claim.attempts, ...durationOf(timing) });
      return { status: 'processed', attempts: claim.attempts };
    } catch (error) {
      return this.#fail(entry, error, timing);
    }
  }

  /** Rebuilds and handles a broker delivery: a JSON body that does not parse goes dead with its reason, unhandled. */
  async handleDelivery(raw: RawDelivery, handler?: MessageHandler<Tx>): Promise<HandleOutcome> {
    let identity: { id: string; type: string };
    try {
      identity = identify(raw);
    } catch (error) {
      return { status: 'malformed', reason: describeError(error) };
    }
    const partial = { ...identity, topic: raw.topic, key: raw.key === undefined || raw.key === '' ? null : raw.key };
    let body: { payload: unknown; contentType: string };
    try {
      body = payloadOf(raw, `message ${identity.id}`);
    } catch (error) {
      return this.#fail({ consumer: this.consumer, ...partial }, error);
    }
    const message: ReceivedMessage = Object.freeze({ ...partial, headers: Object.freeze({ ...raw.headers }), ...body, deliveryCount: raw.deliveryCount });
    return this.handle(message, handler);
  }

  /**
   * Handles several deliveries in one transaction: every entry claimed (one statement where the store has
   * `claimMany`), then each claimed message's handler in the order given, then one commit. All or nothing: the
   * outcome of each delivery (`processed`, or `duplicate` for a message settled before and for a second copy of an
   * id), or `undefined` when the batch did not commit. Nothing is recorded then: a handler that threw may have
   * failed because of the batch (another handler's lock, a deadlock between batches, a transaction a handler broke),
   * so each delivery is handled again alone (`handleDelivery`), where a failure is charged to its own message. So is
   * a batch with a delivery that cannot be rebuilt or validated, before any handler runs. A store without `claimMany`
   * declines every batch (`undefined`, nothing run): only a store that sees a transaction its handlers broke may
   * batch (docs/design/consumer-batches.md, "Why it is safe"). Never throws.
   */
  async handleBatch(raws: readonly RawDelivery[], handler?: MessageHandler<Tx>): Promise<HandleOutcome[] | undefined> {
    const { store } = this;
    if (store.claimMany === undefined) return undefined;
    const batchStore = { claimMany: store.claimMany.bind(store) };
    const plan = await planBatch<Tx>(raws, this.consumer, (message) => this.#prepare(message, handler));
    if (plan === undefined) return undefined;
    const timings: HandlerTiming[] = plan.unique.map(() => ({}));
    let claims: readonly InboxClaim[];
    try {
      claims = await store.transaction(async (tx) => {
        const claimed = await claimAll(
          batchStore,
          tx,
          plan.unique.map((item) => item.entry),
        );
        for (const [index, item] of plan.unique.entries()) {
          if (claimed[index]?.state === 'claimed') await timed(timings[index] as HandlerTiming, () => item.run(tx));
        }
        return claimed;
      });
    } catch {
      return undefined;
    }
    return plan.slots.map(({ item, first }): HandleOutcome => {
      const { entry } = plan.unique[item] as BatchItem<Tx>;
      const claim = claims[item] as InboxClaim;
      if (first && claim.state === 'claimed') {
        this.#emit('onProcessed', { ...entry, attempts: claim.attempts, ...durationOf(timings[item] ?? {}) });
        return { status: 'processed', attempts: claim.attempts };
      }
      const state = claim.state === 'dead' ? 'dead' : 'processed';
      this.#emit('onDuplicate', { ...entry, state });
      return { status: 'duplicate', state };
    });
  }

  /** Validates against the registry (when there is one) and picks the handler, before any transaction. */
  async #prepare(message: ReceivedMessage, explicit: MessageHandler<Tx> | undefined): Promise<(tx: Tx) => Promise<void>> {
    const { registry } = this.options;
    if (registry === undefined) {
      if (explicit === undefined)
        throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `inbox ${this.consumer}: handle() needs a handler, or a registry in the inbox options`);
      return async (tx) => explicit(message, tx);
    }
    const payload = await registry.parseAsync(message.type, message.payload, `message ${message.id}`);
    const handler = explicit ?? registry.handlerFor(message.type);
    if (handler === undefined)
      throw new ConfigurationError(
        'OUTBOXER_INVALID_OPTION',
        `inbox ${this.consumer}: no handler registered for type ${JSON.stringify(message.type.slice(0, 100))}`,
      );
    const typed: ReceivedMessage = Object.freeze({ ...message, payload });
    return async (tx) => handler(typed, tx);
  }

  async #fail(entry: InboxEntryRef, error: unknown, timing: HandlerTiming = {}): Promise<HandleOutcome> {
    const reason = describeError(error);
    const permanent = error instanceof MessageValidationError;
    const { retry } = this.options;
    const record = await this.store.recordFailure(entry, { reason, maxAttempts: retry.maxAttempts, dead: permanent });
    const fields = { consumer: entry.consumer, id: entry.id, type: entry.type, topic: entry.topic, attempts: record.attempts, error: reason };
    if (record.state === 'processed') {
      this.#emit('onDuplicate', { ...entry, state: 'processed' });
      return { status: 'duplicate', state: 'processed' };
    }
    if (record.state === 'dead') {
      this.options.logger.error(fields, 'inbox: message is dead');
      this.#emit('onDead', { ...entry, attempts: record.attempts, reason, ...durationOf(timing) });
      return { status: 'dead', attempts: record.attempts, reason };
    }
    const retryInMs = retryDelayMs(retry, record.attempts);
    this.options.logger.warn({ ...fields, retryInMs }, 'inbox: handler failed; rolled back, will retry');
    this.#emit('onRetry', { ...entry, attempts: record.attempts, error: reason, retryInMs, ...durationOf(timing) });
    return { status: 'retry', attempts: record.attempts, error: reason, retryInMs };
  }

  #entry(message: ReceivedMessage): InboxEntryRef {
    return { consumer: this.consumer, id: message.id, type: message.type, topic: message.topic, key: message.key };
  }

  #emit<K extends keyof InboxOptions<Tx>['hooks']>(name: K, event: Parameters<NonNullable<InboxOptions<Tx>['hooks'][K]>>[0]): void {
    try {
      (this.options.hooks[name] as ((e: typeof event) => void) | undefined)?.(event);
    } catch {
      // an observer must not change what the inbox does
    }
  }
}

/** How long the handler ran, once it has run (returned or thrown). */
interface HandlerTiming {
  durationMs?: number;
}

async function timed(timing: HandlerTiming, work: () => Promise<void>): Promise<void> {
  const started = performance.now();
  try {
    await work();
  } finally {
    timing.durationMs = performance.now() - started;
  }
}

function durationOf(timing: HandlerTiming): { durationMs?: number } {
  return timing.durationMs === undefined ? {} : { durationMs: timing.durationMs };
}
