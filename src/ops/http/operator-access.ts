import type { DeadMessage } from '../../core/message.js';
import type { DestinationFilter, DestinationPause, OutboxOperator, OutboxStats, RelayGroup, TopicPause } from '../../core/ports/outbox-operator.js';
import { type Reading, SharedRead } from './shared-read.js';
import type { StoreGate } from './store-gate.js';
import { supported } from './store-failure.js';
import { TOPIC_LAG_CACHE_MS, TopicLagCache, type TopicLagReading } from './topic-lag-cache.js';

/** The largest `limit` the list endpoints take: the shared reads ask for this many, and each answer takes its part. */
export const MAX_LIST_LIMIT = 1000;

/** How long one `stats()` serves later requests: it counts every row, and dashboards refresh every 2 s. */
export const STATS_CACHE_MS = 1000;

/**
 * How the HTTP server reaches the store, so that what it costs does not depend on what its clients ask:
 * - every call goes through the server's `StoreGate` (a bounded number at once, the rest refused quickly);
 * - the reads are shared: requests that arrive while one runs share it; `stats` (a count of every row) then serves
 *   for 1 s and `topicLag` (a read of every pending row) for 5 s;
 * - a read does not depend on the request: the lists are read at their largest limit and each answer takes the
 *   first `limit` (the store's order is stable), so a thousand distinct limits cost one read; a list of one
 *   destination's dead messages is a read of its own, through the gate (as a filtered list of pending messages);
 * - a change forgets the reads it changes, so the next read shows it.
 */
export class OperatorAccess {
  readonly #operator: OutboxOperator;
  readonly #gate: StoreGate;
  readonly #stats: SharedRead<OutboxStats>;
  readonly #lag: TopicLagCache;
  readonly #dead: SharedRead<DeadMessage[]>;
  readonly #paused: SharedRead<TopicPause[]>;
  readonly #pausedDestinations: SharedRead<DestinationPause[]>;
  readonly #group: SharedRead<RelayGroup>;

  constructor(operator: OutboxOperator, gate: StoreGate) {
    this.#operator = operator;
    this.#gate = gate;
    const gated =
      <T>(call: () => Promise<T>) =>
      () =>
        gate.run(call);
    this.#stats = new SharedRead(
      gated(() => operator.stats()),
      STATS_CACHE_MS,
    );
    this.#lag = new TopicLagCache((limit) => gate.run(() => supported(operator.topicLag, 'topicLag').call(operator, limit)), TOPIC_LAG_CACHE_MS);
    this.#dead = new SharedRead(
      gated(() => operator.listDead(MAX_LIST_LIMIT)),
      0,
    );
    this.#paused = new SharedRead(
      gated(() => supported(operator.pausedTopics, 'pausedTopics').call(operator)),
      0,
    );
    this.#pausedDestinations = new SharedRead(
      gated(() => supported(operator.pausedDestinations, 'pausedDestinations').call(operator)),
      0,
    );
    this.#group = new SharedRead(
      gated(() => supported(operator.relayGroup, 'relayGroup').call(operator)),
      0,
    );
  }

  stats(): Promise<Reading<OutboxStats>> {
    return this.#stats.get();
  }

  /** The backlog per topic, at most `limit` topics, and when it was read (up to 5 s before). */
  async topicLag(limit: number): Promise<TopicLagReading> {
    supported(this.#operator.topicLag, 'topicLag');
    const { at, topics } = await this.#lag.get(MAX_LIST_LIMIT);
    return { at, topics: topics.slice(0, limit) };
  }

  /** The first `limit` dead messages; of one destination only when `filter.destination` is given (a read of its own, not shared). */
  async listDead(limit: number, filter: DestinationFilter = {}): Promise<DeadMessage[]> {
    if (filter.destination !== undefined) return this.#gate.run(() => this.#operator.listDead(limit, { destination: filter.destination }));
    return (await this.#dead.get()).value.slice(0, limit);
  }

  async pausedTopics(): Promise<TopicPause[]> {
    supported(this.#operator.pausedTopics, 'pausedTopics');
    return (await this.#paused.get()).value;
  }

  /** The destinations operators paused as a whole, oldest first (a shared read, like the paused topics). */
  async pausedDestinations(): Promise<DestinationPause[]> {
    supported(this.#operator.pausedDestinations, 'pausedDestinations');
    return (await this.#pausedDestinations.get()).value;
  }

  async relayGroup(): Promise<RelayGroup> {
    supported(this.#operator.relayGroup, 'relayGroup');
    return (await this.#group.get()).value;
  }

  /** Any other call of the store, through the gate (not shared): what a new endpoint uses for a store method without a shared read here. */
  run<T>(call: (operator: OutboxOperator) => Promise<T>): Promise<T> {
    return this.#gate.run(() => call(this.#operator));
  }

  retryDead(ids: readonly string[] | 'all', filter: DestinationFilter = {}): Promise<number> {
    return this.#change(() => this.#operator.retryDead(ids, filter), this.#stats, this.#dead);
  }

  purgeDead(ids: readonly string[] | 'all', filter: DestinationFilter = {}): Promise<number> {
    return this.#change(() => this.#operator.purgeDead(ids, filter), this.#stats, this.#dead);
  }

  pauseTopic(topic: string, reason: string): Promise<boolean> {
    const pause = supported(this.#operator.pauseTopic, 'pauseTopic');
    return this.#change(() => pause.call(this.#operator, topic, reason), this.#paused);
  }

  resumeTopic(topic: string): Promise<boolean> {
    const resume = supported(this.#operator.resumeTopic, 'resumeTopic');
    return this.#change(() => resume.call(this.#operator, topic), this.#paused);
  }

  pauseDestination(destination: string, reason: string): Promise<boolean> {
    const pause = supported(this.#operator.pauseDestination, 'pauseDestination');
    return this.#change(() => pause.call(this.#operator, destination, reason), this.#pausedDestinations);
  }

  resumeDestination(destination: string): Promise<boolean> {
    const resume = supported(this.#operator.resumeDestination, 'resumeDestination');
    return this.#change(() => resume.call(this.#operator, destination), this.#pausedDestinations);
  }

  async #change<T>(call: () => Promise<T>, ...changed: readonly SharedRead<unknown>[]): Promise<T> {
    try {
      return await this.#gate.run(call);
    } finally {
      for (const read of changed) read.invalidate();
    }
  }
}
