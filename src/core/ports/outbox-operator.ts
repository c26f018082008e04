import type { DeadMessage } from '../message.js';
import type { PendingMessageOperator } from './pending-messages.js';

export interface OutboxStats {
  /** Ready to publish now. */
  readonly pending: number;
  /** Waiting for their due time: delayed, backing off after a failure, or held (a paused topic or destination). */
  readonly scheduled: number;
  /** Published and still retained (0 when published rows are deleted at once). */
  readonly published: number;
  readonly dead: number;
  /** Age in seconds of the oldest message not yet published or dead, by the database clock; 0 if none. */
  readonly oldestPendingAgeSeconds: number;
}

/**
 * The cheap gauges of a metrics scrape: no full count of the table (docs/metrics.md says how exact each is).
 */
export interface OutboxGauges {
  /** Messages pending (due or scheduled): exact up to `pendingExactLimit`, an estimate above it. */
  readonly pending: number;
  /** Whether `pending` was counted (true) or estimated (false). */
  readonly pendingExact: boolean;
  readonly dead: number;
  /** Age in seconds of the oldest pending message, by the database clock; 0 if none. */
  readonly oldestPendingAgeSeconds: number;
}

/** Limits an operator's request to the rows of one destination (`null`: the rows without one, the relay's own publisher). */
export interface DestinationFilter {
  readonly destination?: string | null | undefined;
}

/** One topic's backlog: pending messages and the age of the oldest; and whether relays hold it for a missing destination. */
export interface TopicLag {
  readonly topic: string;
  /** The destination of these rows; null for the relay's own publisher. A topic fanned out has one entry per destination. */
  readonly destination: string | null;
  readonly pending: number;
  readonly oldestPendingAgeSeconds: number;
  /**
   * Set when relays hold this topic because its destination is missing (no queue bound, no exchange, no stream),
   * as its held rows record it; null (or absent, from a store that does not read it) otherwise.
   */
  readonly relayPause?: RelayTopicPause | null;
}

/**
 * A topic that relays hold by themselves because its destination is missing: what its held rows' `last_error`
 * says (`destination missing since <time>: <error>`, see `relayHoldReason`). Each relay probes it with backoff and
 * publishes again by itself once the destination exists; nothing is for an operator to resume.
 */
export interface RelayTopicPause {
  /** The publisher's error of the latest episode, e.g. `OUTBOXER_UNROUTABLE: …`. */
  readonly reason: string;
  /** When a relay found the destination missing: the earliest episode its held rows still record (that relay's clock). */
  readonly since: Date;
  /** Pending messages held for it (the rest of its backlog waits behind them or is not read yet). */
  readonly held: number;
}

/** A topic an operator paused: every relay holds its messages (uncounted) until it is resumed. */
export interface TopicPause {
  readonly topic: string;
  readonly reason: string;
  readonly pausedAt: Date;
}

/**
 * A destination an operator paused as a whole (every topic of it): every relay holds its messages (uncounted) until
 * it is resumed. `default` is the relay's own publisher (rows without a destination).
 */
export interface DestinationPause {
  readonly destination: string;
  readonly reason: string;
  readonly pausedAt: Date;
}

/** A live relay with the partitions it holds, for operators (`outboxer status`, the admin API). */
export interface RelayGroupMember {
  /** Its relay id (new at every start or rejoin). */
  readonly id: string;
  /** What it called itself at join (its `owner` option: host and pid by default). */
  readonly name: string;
  /** It announced it is leaving: it takes nothing more. */
  readonly leaving: boolean;
  /** Time left on its lease, by the database clock. */
  readonly expiresInMs: number;
  /** Partitions it owns or is draining, ascending. */
  readonly partitions: readonly number[];
  /** What it reported with its last beat about its broker (why it cannot publish, since when), or null while it can. */
  readonly trouble: { readonly reason: string; readonly since: Date } | null;
}

/** The relays of a table and its partitions: who holds what, and which partitions nobody holds. */
export interface RelayGroup {
  readonly partitionCount: number;
  /** Relays whose lease runs past the database's `now()`, by name then id. */
  readonly relays: readonly RelayGroupMember[];
  /** Partitions no live relay holds (free, or named by a relay whose lease ran out), ascending. */
  readonly unowned: readonly number[];
}

/** The most groups (topic and destination) one `topicLag` call returns, on every store. */
export const MAX_TOPIC_LAG_LIMIT = 1000;

/**
 * The operator role: what `outboxer status`, `outboxer dead` and the admin API need from a store.
 *
 * Contract:
 * - `stats`, `listDead`, `topicLag`, `pausedTopics`, `pausedDestinations` and `relayGroup` read and never write.
 * - Dead messages leave the relay's reach until an operator acts. `retryDead` gives them back as pending
 *   with fresh attempts, keeping their place in store order; `purgeDead` deletes them. Both touch only
 *   messages that are dead, so repeating a call changes nothing more, and both return how many they changed.
 * - A topic an operator paused is held by every relay of the table (its messages stay pending, attempts
 *   uncounted, key order kept) from the relay's next read of the paused list until `resumeTopic`; pausing and
 *   resuming write only the store's list of paused topics, never a message. Both are idempotent and validate
 *   their input (`checkTopicPause`: a topic of at most 255 bytes, a reason of at most 500, no control characters).
 * - A destination an operator paused is held the same way, every topic of it, by every relay of the table until
 *   `resumeDestination`; pausing and resuming write only the store's list of paused destinations. Both are
 *   idempotent and validate their input (`checkDestinationPause`: a destination's name or `default`).
 */
export interface OutboxOperator extends PendingMessageOperator {
  stats(): Promise<OutboxStats>;
  /** At most `limit` dead messages, in the order they died, each with the reason it was parked; only `filter.destination`'s when given. */
  listDead(limit: number, filter?: DestinationFilter): Promise<DeadMessage[]>;
  /** Moves dead messages back to pending with fresh attempts; `'all'` for every one (in bounded batches); only `filter.destination`'s when given. */
  retryDead(ids: readonly string[] | 'all', filter?: DestinationFilter): Promise<number>;
  /** Deletes dead messages; `'all'` for every one; only `filter.destination`'s when given. */
  purgeDead(ids: readonly string[] | 'all', filter?: DestinationFilter): Promise<number>;
  /** The gauges of a metrics scrape, in a few index reads (never a count of every row). */
  gauges?(): Promise<OutboxGauges>;
  /**
   * Pending messages (due or scheduled) and oldest age per topic, at most `limit` topics: those relays hold for a
   * missing destination first (with `relayPause`), then largest backlog first. It reads every pending row: for an
   * operator's request, not for a metrics scrape.
   */
  topicLag(limit: number): Promise<TopicLag[]>;
  /**
   * Pauses a topic for every relay (kept in the database) until `resumeTopic`. Returns false if it was paused
   * already (its first reason and time are kept).
   */
  pauseTopic(topic: string, reason: string): Promise<boolean>;
  /** Ends an operator's pause. Returns false if the topic was not paused. */
  resumeTopic(topic: string): Promise<boolean>;
  /** The topics operators paused, oldest pause first. */
  pausedTopics(): Promise<TopicPause[]>;
  /**
   * Pauses a whole destination (every topic of it; `default`: the rows without a destination) for every relay,
   * kept in the database, until `resumeDestination`. Returns false if it was paused already (its first reason and
   * time are kept). The other destinations keep flowing.
   */
  pauseDestination(destination: string, reason: string): Promise<boolean>;
  /** Ends an operator's pause of a destination. Returns false if it was not paused. */
  resumeDestination(destination: string): Promise<boolean>;
  /** The destinations operators paused, oldest pause first. */
  pausedDestinations(): Promise<DestinationPause[]>;
  /** The live relays (by the database clock, as the leases define it), the partitions each holds, and those nobody holds. */
  relayGroup(): Promise<RelayGroup>;
}
