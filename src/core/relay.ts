import { ConfigurationError, describeError } from './errors.js';
import { PartitionRelay, type StoreForPartitionRelay } from './partition-relay/partition-relay.js';
import { runHousekeeping } from './housekeeping.js';
import { MarkBatcher } from './mark-batcher.js';
import type { OutboxMessage } from './message.js';
import type { Claim, OutboxSchema, Publisher, RelayStore } from './ports.js';
import { type ClaimOutcome, publishClaim } from './publish-claim.js';
import { reportOutcome } from './publish-report.js';
import { resolveRelayOptions, type RelayOptions, type RelayOptionsInput } from './relay-options.js';
import { runStartChecks, type StartCheck } from './start-checks.js';
import { TopicPauses } from './topic-pauses.js';
import { Waker } from './waker.js';

/** Leaves this share of the lease unused, so that marks land before another relay may claim. */
const LEASE_SAFETY_SHARE = 0.2;
const MARK_ATTEMPTS = 4;
const HELPER_LANE_NAP_MS = 60_000;

export interface RelayRoundResult {
  readonly claimed: number;
  readonly published: number;
  readonly retried: number;
  readonly dead: number;
  readonly released: number;
  /** Of `released`: held because their topic is paused (its destination is missing), claimable again later. */
  readonly held: number;
  /** Rows the marks could not touch because the lease had been taken over. */
  readonly fenced: number;
  /** The broker was unreachable during this round: the loop backs off before the next claim. */
  readonly brokerUnavailable: boolean;
}

/**
 * What `Relay` needs from a store: the relay role, and the schema role's start check for `verify()`. Under
 * `engine: 'v2'` also the partition leases and reader (`store.leases`, `store.reader`), checked at construction.
 */
export type StoreForRelay = RelayStore & Pick<OutboxSchema, 'verify'> & Partial<Pick<StoreForPartitionRelay, 'leases' | 'reader'>>;

/**
 * Moves committed messages from a store to a publisher: claim under a lease, publish with the
 * broker's confirmation, mark under the claim's fencing token. Any number of relays may share a store.
 * With `engine: 'v2'` it runs a `PartitionRelay` instead (partition leases, no claim; no hand-off).
 */
export class Relay {
  readonly options: RelayOptions;
  readonly #store: StoreForRelay;
  readonly #publisher: Publisher;
  readonly #waker = new Waker();
  #helperWakers: Waker[] = [];
  #running: Promise<void> | undefined;
  readonly #handoffs = new Set<Promise<void>>();
  #handoffMessages = 0;
  readonly #handoffMarks: MarkBatcher | undefined;
  #stopping = false;
  #lastHousekeeping = 0;
  #claimFrom: string | undefined;
  #lastFullSweep = Number.NEGATIVE_INFINITY;
  readonly #pauses: TopicPauses;
  readonly #v2: PartitionRelay | undefined;

  constructor(store: StoreForRelay, publisher: Publisher, options: RelayOptionsInput = {}) {
    this.#store = store;
    this.#publisher = publisher;
    this.options = resolveRelayOptions(options);
    this.#v2 = this.options.engine === 'v2' ? new PartitionRelay(partitionStore(store), publisher, this.options) : undefined;
    this.#pauses = new TopicPauses(this.options.errorBackoffMs, this.options.maxErrorBackoffMs);
    const markEach = store.markPublishedEach?.bind(store);
    this.#handoffMarks = markEach === undefined ? undefined : new MarkBatcher(markEach);
  }

  get running(): boolean {
    return this.#v2?.running ?? this.#running !== undefined;
  }

  /** Under engine v2, the partition relay this relay runs (its relay id and partitions, for operators and tests). */
  get partitionRelay(): PartitionRelay | undefined {
    return this.#v2;
  }

  /**
   * Whether `handoff` will publish: the relay runs, is not stopping, and fewer than `maxHandoff` handed-off
   * messages are unfinished (past that, the claim path's batches are cheaper for the database).
   */
  get acceptsHandoff(): boolean {
    return this.#v2 === undefined && this.#running !== undefined && !this.#stopping && this.#handoffMessages < this.options.maxHandoff;
  }

  /**
   * The in-process fast path: publishes messages that were leased to this relay as they were inserted
   * (see `Outbox.transaction`), right after their commit, with no claim query. `startedAt` is the
   * monotonic time before the insert, so the lease deadline is judged conservatively.
   */
  handoff(batch: { readonly token: string; readonly startedAt: number; readonly messages: readonly OutboxMessage[] }): void {
    if (batch.messages.length === 0) return;
    const count = batch.messages.length;
    this.#handoffMessages += count;
    const work: Promise<void> = this.#publishHandoff(batch)
      .catch((error: unknown) => {
        const description = describeError(error);
        this.options.logger.error({ owner: this.options.owner, error: description }, 'hand-off failed; its messages return to the claim path when the lease ends');
        this.options.hooks.onError?.({ stage: 'mark', error: description });
      })
      .finally(() => {
        this.#handoffMessages -= count;
        this.#handoffs.delete(work);
      });
    this.#handoffs.add(work);
  }

  async #publishHandoff(batch: { readonly token: string; readonly startedAt: number; readonly messages: readonly OutboxMessage[] }): Promise<void> {
    const claim: Claim = { token: batch.token, messages: batch.messages };
    const outcome = await publishClaim(batch.messages, {
      publisher: this.#publisher,
      options: this.options,
      publishDeadline: batch.startedAt + this.options.leaseMs * (1 - LEASE_SAFETY_SHARE) - this.options.publishTimeoutMs,
      isStopping: () => this.#stopping,
      pauses: this.#pauses,
    });
    await this.#record(claim, outcome, this.#handoffMarks);
  }

  /**
   * The start checks, to await before `start()`: the store's schema is migrated (`store.verify`), and the
   * publisher reaches its broker and declares its topology (`publisher.verify`), side by side. Rejects with
   * the first misconfiguration no retry can mend (`isMisconfiguration`: `OUTBOXER_NOT_MIGRATED`,
   * `OUTBOXER_AUTH_FAILED`, `OUTBOXER_VHOST_REFUSED`, `OUTBOXER_WRONG_PROTOCOL`, ...), database first. A server
   * that is merely down is logged and let through: once started, the relay rides it out with backoff.
   */
  async verify(): Promise<void> {
    const database = this.#store.verify?.bind(this.#store);
    const broker = this.#publisher.verify?.bind(this.#publisher);
    const checks: StartCheck[] = [];
    if (database !== undefined) checks.push({ what: 'database', check: database });
    if (broker !== undefined) checks.push({ what: 'broker', check: broker });
    await runStartChecks(checks, this.options.logger);
  }

  /** Starts the loop in the background; `stop()` ends it. Calling it twice is a no-op. */
  start(): void {
    if (this.#v2 !== undefined) return this.#v2.start();
    if (this.#running !== undefined) return;
    this.#stopping = false;
    this.#running = this.#run().finally(() => {
      this.#running = undefined;
    });
  }

  async #run(): Promise<void> {
    const signal = this.options.wakeSignal;
    if (signal !== undefined) {
      try {
        await signal.start(() => this.#waker.wake());
      } catch (error) {
        this.options.logger.warn({ owner: this.options.owner, error: describeError(error) }, 'wake signal unavailable; relying on polling');
      }
    }
    try {
      this.#helperWakers = Array.from({ length: this.options.lanes - 1 }, () => new Waker());
      await Promise.all([this.#loop(), ...this.#helperWakers.map((waker) => this.#helperLane(waker))]);
    } finally {
      await signal?.stop().catch(() => undefined);
    }
  }

  /** Asks for a claim now instead of at the next poll (e.g. right after a commit). */
  wake(): void {
    if (this.#v2 !== undefined) return this.#v2.wake();
    this.#waker.wake();
  }

  /**
   * Graceful stop: no new publish starts; publishes already sent wait for their confirmation (bounded
   * by the publish timeout), are marked, and the rest of the claim is released for another relay.
   */
  async stop(): Promise<void> {
    if (this.#v2 !== undefined) return this.#v2.stop();
    this.#stopping = true;
    this.#waker.wake();
    for (const waker of this.#helperWakers) waker.wake();
    await this.#running;
    await Promise.all([...this.#handoffs]);
  }

  /** One claim-publish-mark round; the loop is made of these. Useful in tests and scripts. */
  async runOnce(): Promise<RelayRoundResult> {
    if (this.#v2 !== undefined) throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `runOnce is engine v1's claim round; relay ${this.options.owner} runs engine v2: use start() and stop()`, { options: ['engine'] });
    const claimStartedAt = performance.now();
    const fromSeq = claimStartedAt - this.#lastFullSweep >= this.options.fullSweepIntervalMs ? undefined : this.#claimFrom;
    if (fromSeq === undefined) this.#lastFullSweep = claimStartedAt;
    const claim = await this.#store.claim({
      owner: this.options.owner,
      leaseMs: this.options.leaseMs,
      limit: this.options.batchSize,
      maxKeys: this.options.maxInFlight,
      ...(fromSeq === undefined ? {} : { fromSeq }),
    });
    if (claim.lowestCandidateSeq !== undefined) this.#claimFrom = claim.lowestCandidateSeq;
    else if (fromSeq === undefined) this.#claimFrom = undefined;
    if (claim.messages.length === 0) return emptyRound;
    const outcome = await publishClaim(claim.messages, {
      publisher: this.#publisher,
      options: this.options,
      publishDeadline: claimStartedAt + this.options.leaseMs * (1 - LEASE_SAFETY_SHARE) - this.options.publishTimeoutMs,
      isStopping: () => this.#stopping,
      pauses: this.#pauses,
    });
    return this.#record(claim, outcome);
  }

  async #record(claim: Claim, outcome: ClaimOutcome, batcher?: MarkBatcher): Promise<RelayRoundResult> {
    const store = this.#store;
    // A database blip between the broker's confirmation and the mark would otherwise turn into a
    // duplicate publish after the lease runs out, so marks are retried briefly before giving up.
    const groups = [...outcome.held.values()];
    const held = groups.reduce((sum, group) => sum + group.messages.length, 0);
    const [published, failed, released, ...heldBack] = await Promise.all([
      this.#persistently(() =>
        (batcher === undefined ? store.markPublished.bind(store) : batcher.mark.bind(batcher))(claim.token, outcome.published.map((m) => m.id)),
      ),
      this.#persistently(() => store.markFailed(claim.token, outcome.failed.map((f) => f.failure))),
      this.#persistently(() => store.release(claim.token, outcome.released.map((m) => m.id), outcome.brokerUnavailable)),
      ...groups.map((group) => this.#persistently(() => store.release(claim.token, group.messages.map((m) => m.id), group.error, group.delayMs))),
    ]);
    const expected = outcome.published.length + outcome.failed.length + outcome.released.length + held;
    const fenced = expected - (published + failed + released + heldBack.reduce((sum, n) => sum + n, 0));
    if (fenced > 0) {
      this.options.logger.warn({ owner: this.options.owner, fenced, claimed: claim.messages.length }, 'lease was taken over before marking; another relay owns these messages now');
      this.options.hooks.onFenced?.({ expected, marked: expected - fenced });
    }
    const { retried, dead } = reportOutcome(outcome, this.options);
    return {
      claimed: claim.messages.length,
      published: outcome.published.length,
      retried,
      dead,
      released: outcome.released.length + held,
      held,
      fenced,
      brokerUnavailable: outcome.brokerUnavailable !== undefined,
    };
  }

  async #persistently(write: () => Promise<number>): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt >= MARK_ATTEMPTS) throw error;
        this.options.hooks.onError?.({ stage: 'mark', error: describeError(error) });
        await new Promise((resolve) => setTimeout(resolve, this.options.errorBackoffMs * attempt));
      }
    }
  }

  async #loop(): Promise<void> {
    const { logger, hooks } = this.options;
    let idleDelay = this.options.pollIntervalMs;
    let errorDelay = this.options.errorBackoffMs;
    let brokerDelay = this.options.errorBackoffMs;
    logger.info({ owner: this.options.owner, publisher: this.#publisher.name }, 'relay started');
    while (!this.#stopping) {
      let round: RelayRoundResult;
      try {
        round = await this.runOnce();
        await this.#housekeeping();
        if (round.brokerUnavailable) {
          // Commits may keep waking the relay: the broker still gets its full backoff.
          await this.#pauseUnlessStopping(brokerDelay);
          brokerDelay = Math.min(brokerDelay * 2, this.options.maxErrorBackoffMs);
          continue;
        }
        brokerDelay = this.options.errorBackoffMs;
        errorDelay = this.options.errorBackoffMs;
      } catch (error) {
        const description = describeError(error);
        logger.error({ owner: this.options.owner, error: description, retryInMs: errorDelay }, 'relay round failed; backing off');
        hooks.onError?.({ stage: 'claim', error: description });
        await this.#waker.wait(errorDelay);
        errorDelay = Math.min(errorDelay * 2, this.options.maxErrorBackoffMs);
        continue;
      }
      // Held messages are pushed out of the claim's reach, so claiming again at once finds other work.
      if (round.claimed > 0 && round.retried === 0 && round.released === round.held) {
        idleDelay = this.options.pollIntervalMs;
        if (this.#isFull(round)) for (const waker of this.#helperWakers) waker.wake();
        continue;
      }
      if (round.claimed > 0) idleDelay = this.options.pollIntervalMs;
      await this.#waker.wait(idleDelay);
      idleDelay = Math.min(idleDelay * 2, this.options.maxPollIntervalMs);
    }
    logger.info({ owner: this.options.owner }, 'relay stopped');
  }

  /**
   * An extra claim loop: dormant until the main loop claims a full batch (a backlog), then claims
   * alongside it, so one lane's database round trips overlap another's publishing. It goes back to sleep
   * at the first batch that is not full, so an idle relay still makes one query per poll.
   */
  async #helperLane(waker: Waker): Promise<void> {
    while (!this.#stopping) {
      await waker.wait(HELPER_LANE_NAP_MS);
      while (!this.#stopping) {
        let round: RelayRoundResult;
        try {
          round = await this.runOnce();
        } catch {
          break; // the main loop reports and backs off from database errors
        }
        if (!this.#isFull(round) || round.brokerUnavailable || round.retried > 0) break;
      }
    }
  }

  /** A claim that took all it may (the batch, or its quota of keys with nothing queued behind them): a backlog. */
  #isFull(round: RelayRoundResult): boolean {
    return round.claimed >= Math.min(this.options.batchSize, this.options.maxInFlight);
  }

  async #pauseUnlessStopping(ms: number): Promise<void> {
    const until = performance.now() + ms;
    for (let left = ms; left > 0 && !this.#stopping; left = until - performance.now()) await this.#waker.wait(left);
  }

  async #housekeeping(): Promise<void> {
    const now = performance.now();
    if (now - this.#lastHousekeeping < this.options.housekeepingIntervalMs) return;
    this.#lastHousekeeping = now;
    await runHousekeeping(this.#store, this.options, () => this.#stopping);
  }
}

function partitionStore(store: StoreForRelay): StoreForPartitionRelay {
  const { leases, reader } = store;
  if (leases === undefined || reader === undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      "relay option engine 'v2' (the default) needs a store with partition leases and a partition reader (store.leases and store.reader, as the PostgreSQL store has); use engine 'v1' with this store",
      { options: ['engine'] },
    );
  }
  return { leases, reader, purgePublished: (n) => store.purgePublished(n), purgeIdempotencyKeys: (n) => store.purgeIdempotencyKeys(n), verify: () => store.verify?.() ?? Promise.resolve() };
}

const emptyRound: RelayRoundResult = Object.freeze({ claimed: 0, published: 0, retried: 0, dead: 0, released: 0, held: 0, fenced: 0, brokerUnavailable: false });
