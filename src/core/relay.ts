import { Destinations } from './destinations.js';
import { describeError } from './errors.js';
import { runHousekeeping } from './housekeeping.js';
import { BEATS_PER_LEASE } from './partitions/lease-clock.js';
import { newOwner } from './partitions/settlement.js';
import type { FailedMessage, OutboxSchema, PartitionMessage, Publisher, RelayStore } from './ports.js';
import type { RelayHealth } from './relay-health.js';
import { reportOutcome } from './publish-report.js';
import { resolveRelayOptions, type RelayOptions, type RelayOptionsInput } from './relay-options.js';
import { PublishWindow } from './publish-window.js';
import { TopicPauses } from './topic-pauses.js';
import { Waker } from './waker.js';
import { bounded, persistently } from './partition-relay/bounded-statement.js';
import { BrokerWatch, ownOutcome } from './partition-relay/broker-watch.js';
import { relayHealthOf } from './partition-relay/relay-health-of.js';
import { CompletionBatcher } from './partition-relay/completion-batcher.js';
import { LeaseSession } from './partition-relay/lease-session.js';
import { OperatorPauseRefresh, PAUSE_REFRESH_MS } from './partition-relay/operator-pause-refresh.js';
import type { PartitionEntry } from './partition-relay/partition-book.js';
import { publishBatch } from './partition-relay/publish-batch.js';
import { uncounted } from './partition-relay/publish-plan.js';
import { foldReadResult, readRequest, type SentRead } from './partition-relay/read-fold.js';
import { PublishLanes } from './partition-relay/publish-lanes.js';
import { hasIdleBacklog, planRead } from './partition-relay/read-plan.js';
import { skippedOutcomes, withUnwritten } from './partition-relay/unwritten-outcomes.js';
import { UnwrittenRetry } from './partition-relay/unwritten-retry.js';
import { verifyRelay } from './relay-verify.js';

/**
 * What `Relay` needs from a store: the partition leases and reader, housekeeping (`RelayStore`), and the schema
 * role's start check for `verify()`. Every store of the package has them.
 */
export type StoreForRelay = RelayStore & Partial<Pick<OutboxSchema, 'verify'>>;

/** Completions wait this long for those of other partitions, to go in one statement. */
const COMPLETION_DELAY_MS = 5;
const COMPLETION_ATTEMPTS = 4;
/** A due read comes this long after the row's due time, for the database's clock to have passed it too. */
const DUE_MARGIN_MS = 5;

/**
 * Moves committed messages from a store to a publisher (docs/design/relay-loop.md): it leases
 * partitions of the outbox table (`LeaseSession`), reads the ones it holds in one statement from a position per
 * partition, publishes per key in seq order with the broker's confirmation, and writes each outcome once, fenced
 * by the partition's epoch. Any number of relays may share a store.
 */
export class Relay {
  readonly options: RelayOptions;
  readonly #store: StoreForRelay;
  readonly #publisher: Publisher;
  readonly #destinations: Destinations;
  readonly #session: LeaseSession;
  readonly #waker = new Waker();
  readonly #pauses: TopicPauses;
  readonly #operatorPauses: OperatorPauseRefresh;
  readonly #completions: CompletionBatcher;
  readonly #statementMs: number;
  /** Partitions with a batch in flight (publishing or completing), by number: entries dropped meanwhile included. */
  readonly #busy = new Set<number>();
  readonly #batches = new Set<Promise<void>>();
  readonly #window: PublishWindow;
  readonly #broker: BrokerWatch;
  readonly #unwritten: UnwrittenRetry;
  readonly #lanes: PublishLanes;
  #batchesRead = 0;
  #running: Promise<void> | undefined;
  #stopping = false;
  #woken = false;
  #readBlockedUntil = 0;
  /** When (monotonic ms) the earliest row this relay scheduled (a retry, a hold) falls due: a read is made then. */
  #nextDueAt = Number.POSITIVE_INFINITY;
  #brokerDelay: number;
  #lastHousekeeping = 0;
  /** The last failed database statement of the loop, until its next clean pass. */
  #databaseError: string | undefined;
  readonly #counts = { published: 0, retried: 0, dead: 0 };

  constructor(store: StoreForRelay, publisher: Publisher, options: RelayOptionsInput = {}) {
    this.#store = store;
    this.#publisher = publisher;
    this.options = resolveRelayOptions(options);
    this.#destinations = new Destinations(publisher, this.options.destinations);
    this.#pauses = new TopicPauses(this.options.errorBackoffMs, this.options.maxErrorBackoffMs);
    this.#statementMs = Math.floor(this.options.leaseMs / BEATS_PER_LEASE);
    this.#operatorPauses = new OperatorPauseRefresh(
      store.reader,
      this.#pauses,
      { periodMs: Math.min(PAUSE_REFRESH_MS, this.#statementMs), statementMs: this.#statementMs },
      this.options,
    );
    this.#broker = new BrokerWatch(publisher, this.options);
    this.#session = new LeaseSession(store.leases, this.options, {
      isBusy: (p) => this.#busy.has(p),
      trouble: () => this.#broker.reason({ relayId: this.#session.relayId, partitions: this.#session.book.size }),
    });
    this.#completions = new CompletionBatcher((relayId, completions) => {
      // the count these partitions were read with; after a resize their epochs are stale and nothing applies anyway
      const count = this.#session.partitionCount;
      return bounded(store.reader.complete(relayId, completions, count === undefined ? undefined : { partitionCount: count }), this.#statementMs, 'completion');
    }, COMPLETION_DELAY_MS);
    this.#brokerDelay = this.options.errorBackoffMs;
    this.#window = new PublishWindow(this.options.maxInFlight);
    this.#lanes = new PublishLanes(this.options.lanes, this.options.pollIntervalMs);
    this.#unwritten = new UnwrittenRetry({
      options: this.options,
      session: this.#session,
      completions: this.#completions,
      busy: this.#busy,
      batches: this.#batches,
      fenced: (entry, expected) => {
        this.#fenced(entry, expected);
      },
      report: (stage, error) => {
        this.#report(stage, error);
      },
    });
  }

  get running(): boolean {
    return this.#running !== undefined;
  }

  /** The relay id of the current membership (a new one on every join), for operators and tests. */
  get relayId(): string | undefined {
    return this.#session.relayId;
  }

  /** The partitions held now, by number. */
  get partitions(): readonly number[] {
    return [...this.#session.book.keys()].sort((a, b) => a - b);
  }

  /**
   * This relay's state for health checks and gauges, from memory (docs/operations.md). `relaysAlive` is
   * undefined while the database is unreachable or no lease is trusted (not joined, standing by, or past
   * `validUntil` of its last trusted beat): the last count is then no evidence that anyone publishes.
   */
  health(): RelayHealth {
    return relayHealthOf(this.running, this.options, this.#session, this.#databaseError, this.#publisher, this.#pauses, this.#counts);
  }

  /**
   * The start checks, to await before `start()`: the store's schema is migrated (`store.verify`), and the
   * publisher reaches its broker and declares its topology (`publisher.verify`), side by side. Rejects with
   * the first misconfiguration no retry can mend (`isMisconfiguration`: `OUTBOXER_NOT_MIGRATED`,
   * `OUTBOXER_AUTH_FAILED`, `OUTBOXER_VHOST_REFUSED`, `OUTBOXER_WRONG_PROTOCOL`, ...), database first. A server
   * that is merely down is logged and let through: once started, the relay rides it out with backoff.
   */
  verify(): Promise<void> {
    return verifyRelay(this.#store, this.#publisher, this.options);
  }

  /** Starts the loop in the background; `stop()` ends it. Calling it twice is a no-op. */
  start(): void {
    if (this.#running !== undefined) return;
    this.#stopping = false;
    this.#running = this.#run().finally(() => {
      this.#running = undefined;
    });
  }

  /** Reads the held partitions now instead of at the next poll: after a local commit, or a wake signal. */
  wake(): void {
    this.#woken = true;
    this.#waker.wake();
  }

  /** Graceful stop: no new publish; publishes in flight confirmed and completed; then every partition freed (`leave`). */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#waker.wake();
    await this.#running;
  }

  async #run(): Promise<void> {
    const signal = this.options.wakeSignal;
    if (signal !== undefined) {
      try {
        await signal.start(() => this.wake());
      } catch (error) {
        this.options.logger.warn({ owner: this.options.owner, error: describeError(error) }, 'wake signal unavailable; relying on polling');
      }
    }
    await this.#broker.firstConnection();
    try {
      await this.#loop();
    } finally {
      await Promise.all([...this.#batches]);
      await this.#session.leave().catch((error: unknown) => this.#report('lease', error));
      await signal?.stop().catch(() => undefined);
      this.options.logger.info({ owner: this.options.owner }, 'relay stopped');
    }
  }

  async #loop(): Promise<void> {
    const { options } = this;
    let idleDelay = options.pollIntervalMs;
    let errorDelay = options.errorBackoffMs;
    let pollAt = 0;
    options.logger.info({ owner: options.owner, publisher: this.#publisher.name, engine: 'v2' }, 'relay started');
    // a stopping relay keeps beating until its publishes ended and their completions committed
    while (!this.#stopping || this.#batches.size > 0) {
      let stage: 'lease' | 'read' = 'lease';
      try {
        await this.#session.tick(this.#stopping);
        stage = 'read';
        // the operators' pauses are at most one period old whenever a read starts
        if (!this.#stopping && this.#session.book.size > 0) await this.#operatorPauses.refreshIfDue(performance.now());
        const now = performance.now();
        if (now >= this.#nextDueAt) {
          this.#nextDueAt = Number.POSITIVE_INFINITY;
          this.#woken = true;
        }
        if (this.#lanes.rang(now)) this.#woken = true;
        if (!this.#stopping && (this.#woken || now >= pollAt) && now >= this.#readBlockedUntil) {
          this.#woken = false;
          const read = await this.#read();
          idleDelay = read > 0 ? options.pollIntervalMs : Math.min(idleDelay * 2, options.maxPollIntervalMs);
          pollAt = performance.now() + idleDelay;
          // a backlog: the next lane's share is read at once
          if (read > 0 && this.#lanes.publishing < options.lanes && hasIdleBacklog(this.#session.book.values(), (p) => this.#busy.has(p))) this.wake();
        }
        this.#unwritten.retry();
        this.#broker.probeIfDue(() => this.#waker.wake());
        await this.#housekeeping();
        errorDelay = options.errorBackoffMs;
        this.#databaseError = undefined;
      } catch (error) {
        this.#report(stage, error, errorDelay);
        // the lease's own deadlines (the next beat, the lapse) come before a long backoff
        await this.#waker.wait(Math.min(errorDelay, Math.max(0, this.#session.dueAt - performance.now())));
        errorDelay = Math.min(errorDelay * 2, options.maxErrorBackoffMs);
        continue;
      }
      // a wake that came while reads were blocked is served as soon as the block ends, not at the next poll
      const readAt = this.#woken ? this.#readBlockedUntil : Math.max(pollAt, this.#readBlockedUntil);
      const until = this.#stopping ? this.#session.dueAt : Math.min(this.#session.dueAt, readAt, this.#nextDueAt, this.#lanes.alarmAt);
      await this.#waker.wait(Math.max(0, until - performance.now()));
    }
  }

  /** Reads every held partition that is idle in one statement and starts publishing what came back. Returns how many rows. */
  async #read(): Promise<number> {
    const relayId = this.#session.relayId;
    const count = this.#session.partitionCount;
    if (relayId === undefined || count === undefined || performance.now() > this.#session.publishDeadline) return 0;
    if (this.#lanes.refuses(this.#session.book.values(), performance.now())) return 0;
    const plan = planRead([...this.#session.book.values()], (p) => this.#busy.has(p), this.options);
    if (plan.length === 0) return 0;
    const readAt = performance.now();
    const limits = new Map(plan.map(({ entry, limit }) => [entry.partition, limit]));
    const limitOf = (partition: number) => limits.get(partition) ?? 1;
    const sent = new Map<number, { entry: PartitionEntry; read: SentRead }>(
      plan.map(({ entry, limit }) => [entry.partition, { entry, read: readRequest(entry, limit) }]),
    );
    for (const partition of sent.keys()) this.#busy.add(partition);
    let messages: PartitionMessage[] = [];
    try {
      // with fan-out each destination's due rows get their own take, and a paused one's stay out until its pause runs out
      const dueDestinations = this.#destinations.dueDestinations(this.#pauses.pausedDestinations(performance.now()));
      const options = dueDestinations === undefined ? undefined : { dueDestinations };
      const result = await bounded(
        this.#store.reader.read(
          relayId,
          count,
          [...sent.values()].map((s) => s.read.request),
          options,
        ),
        this.#statementMs,
        `read by relay ${relayId}`,
      );
      const unwritten = new Map([...sent.values()].flatMap((s) => [...s.entry.unwritten]));
      const current = foldReadResult(sent, result, (p) => this.#session.book.get(p), readAt);
      messages = withUnwritten(current, unwritten, this.options.errorBackoffMs);
    } finally {
      const working = new Set(messages.map((m) => m.partition));
      for (const partition of sent.keys()) if (!working.has(partition)) this.#busy.delete(partition);
    }
    if (messages.length === 0) return 0;
    const entries = new Map([...sent].filter(([p]) => messages.some((m) => m.partition === p)).map(([p, s]) => [p, s.entry]));
    const batch = this.#publish(relayId, messages, entries, limitOf).finally(() => {
      for (const partition of entries.keys()) this.#busy.delete(partition);
      this.#batches.delete(batch);
      this.wake();
    });
    this.#batches.add(batch);
    return messages.length;
  }

  async #publish(
    relayId: string,
    messages: readonly PartitionMessage[],
    entries: ReadonlyMap<number, PartitionEntry>,
    limitOf: (p: number) => number,
  ): Promise<void> {
    try {
      const ended = this.#lanes.begin(performance.now());
      const { outcome, results, lost } = await publishBatch(messages, entries, {
        relayId,
        publisher: this.#publisher,
        destinations: this.#destinations,
        reader: this.#store.reader,
        options: this.options,
        pauses: this.#pauses,
        publishDeadline: this.#session.publishDeadline,
        isStopping: () => this.#stopping,
        limitOf,
        statementMs: this.#statementMs,
        permits: this.#window.permits(this.#batchesRead++),
      }).finally(() => {
        ended();
        this.wake();
      });
      for (const partition of lost) this.#fenced(entries.get(partition) as PartitionEntry, messages.filter((m) => m.partition === partition).length);
      // broker trouble is judged on the relay's own publisher: another destination's outage pauses that destination only
      this.#broker.observe(this.#destinations.fansOut ? ownOutcome(outcome) : outcome);
      if (outcome.brokerUnavailable !== undefined) {
        this.#readBlockedUntil = performance.now() + this.#brokerDelay;
        this.#brokerDelay = Math.min(this.#brokerDelay * 2, this.options.maxErrorBackoffMs);
      } else if (outcome.published.length > 0) this.#brokerDelay = this.options.errorBackoffMs;
      const byId = new Map(messages.map((m) => [m.id, m]));
      await Promise.all(
        results.map((result) => this.#complete(relayId, entries.get(result.completion.partition) as PartitionEntry, result, (id) => byId.get(id))),
      );
      const { retried, dead } = reportOutcome(outcome, this.options);
      this.#counts.published += outcome.published.length;
      this.#counts.retried += retried;
      this.#counts.dead += dead;
    } catch (error) {
      // publishes that may have gone out are not written: read these partitions again from their start
      for (const entry of entries.values()) entry.settlement = newOwner;
      this.#report('mark', error);
    }
  }

  async #complete(
    relayId: string,
    entry: PartitionEntry,
    result: Awaited<ReturnType<typeof publishBatch>>['results'][number],
    messageOf: (id: string) => PartitionMessage | undefined,
  ): Promise<void> {
    const { completion } = result;
    const expected = completion.published.length + completion.failed.length + completion.held.length;
    if (expected > 0) {
      // a try that failed may still have committed: later tries do not count its failures again
      let tries = 0;
      const outcome = await persistently(
        () => this.#completions.complete(relayId, tries++ === 0 ? completion : uncounted(completion)),
        COMPLETION_ATTEMPTS,
        this.options.errorBackoffMs,
        (error) => this.#report('mark', error),
      );
      if (!outcome.applied) return this.#fenced(entry, expected);
      this.#readWhenDue(completion);
      if (completion.published.length > 0 && this.#session.book.get(entry.partition) === entry) entry.unclean = 0;
      if (outcome.skipped.length > 0) this.#unwritten.keep(entry, skippedOutcomes(tries > 1 ? uncounted(completion) : completion, outcome.skipped, messageOf));
    }
    if (result.reread && this.#session.book.get(entry.partition) === entry) entry.settlement = newOwner;
  }

  /**
   * The rows this completion scheduled (retries, holds) fall due on the database clock after their delay,
   * counted from the statement, which ran before now: a read at now + delay finds the earliest of them, so
   * the time a log line states is the time the row is tried again, not the next poll after it.
   */
  #readWhenDue(completion: { readonly failed: readonly FailedMessage[]; readonly held: readonly { readonly delayMs: number }[] }): void {
    const delays = [...completion.failed.flatMap((f) => ('retryInMs' in f ? [f.retryInMs] : [])), ...completion.held.map((h) => h.delayMs)];
    if (delays.length === 0) return;
    this.#nextDueAt = Math.min(this.#nextDueAt, performance.now() + Math.min(...delays) + DUE_MARGIN_MS);
    this.#waker.wake();
  }

  /** The partition was no longer mine at that epoch: drop it and everything of it in memory. */
  #fenced(entry: PartitionEntry, expected: number): void {
    this.#session.drop(entry);
    this.options.logger.warn(
      { owner: this.options.owner, partition: entry.partition, epoch: entry.epoch },
      'partition was taken over before its completion; another relay owns it now',
    );
    this.options.hooks.onFenced?.({ expected, marked: 0 });
  }

  async #housekeeping(): Promise<void> {
    const now = performance.now();
    if (now - this.#lastHousekeeping < this.options.housekeepingIntervalMs) return;
    this.#lastHousekeeping = now;
    await runHousekeeping(this.#store, this.options, () => this.#stopping);
  }

  #report(stage: 'lease' | 'read' | 'mark', error: unknown, retryInMs?: number): void {
    const description = describeError(error);
    this.#databaseError = description;
    this.options.logger.error(
      { owner: this.options.owner, stage, error: description, ...(retryInMs === undefined ? {} : { retryInMs }) },
      `relay ${stage} step failed`,
    );
    this.options.hooks.onError?.({ stage, error: description });
  }
}
