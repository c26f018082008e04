import type { DestinationPause, RelayGroup, TopicLag, TopicPause } from '../../../core/ports.js';
import type { PendingMessage, PendingMessageDetail, PendingQuery } from '../../../core/ports/pending-messages.js';
import type { PgDatabase } from '../database.js';
import type { NamedStatement } from '../named-statement.js';
import type { TableName } from '../sql.js';
import { deletePending, inspectPending, listPending, pendingMessageStatements, type PendingMessageStatements } from './pending-messages.js';
import {
  listPausedDestinations,
  pauseDestination,
  pausedDestinationStatements,
  type PausedDestinationStatements,
  resumeDestination,
} from './paused-destinations.js';
import { listPausedTopics, pauseTopic, pausedTopicStatements, type PausedTopicStatements, resumeTopic } from './paused-topics.js';
import { readRelayGroupPartitions, relayGroupStatement } from './relay-group-partitions.js';
import { readTopicLag, topicLagStatement } from './topic-lag.js';

/**
 * The operator methods added for operations (issue 11) on PostgreSQL and PGlite: lag per topic, operator pauses,
 * the relay group, and the pending-message tools. `PostgresOutboxStore` delegates to it; each statement is built once per table and
 * prepared where the driver allows it.
 */
export class PostgresOperatorQueries {
  readonly #database: PgDatabase;
  readonly #prepare: boolean;
  readonly #pauses: PausedTopicStatements;
  readonly #destinationPauses: PausedDestinationStatements;
  readonly #topicLag: NamedStatement;
  readonly #relayGroup: NamedStatement;
  readonly #pending: PendingMessageStatements;

  constructor(database: PgDatabase, name: TableName, prepare: boolean) {
    this.#database = database;
    this.#prepare = prepare;
    this.#pauses = pausedTopicStatements(name);
    this.#destinationPauses = pausedDestinationStatements(name);
    this.#topicLag = topicLagStatement(name);
    this.#relayGroup = relayGroupStatement(name);
    this.#pending = pendingMessageStatements(name);
  }

  topicLag(limit: number): Promise<TopicLag[]> {
    return readTopicLag(this.#database, this.#topicLag, this.#prepare, limit);
  }

  pauseTopic(topic: string, reason: string): Promise<boolean> {
    return pauseTopic(this.#database, this.#pauses, this.#prepare, topic, reason);
  }

  resumeTopic(topic: string): Promise<boolean> {
    return resumeTopic(this.#database, this.#pauses, this.#prepare, topic);
  }

  pausedTopics(): Promise<TopicPause[]> {
    return listPausedTopics(this.#database, this.#pauses, this.#prepare);
  }

  pauseDestination(destination: string, reason: string): Promise<boolean> {
    return pauseDestination(this.#database, this.#destinationPauses, this.#prepare, destination, reason);
  }

  resumeDestination(destination: string): Promise<boolean> {
    return resumeDestination(this.#database, this.#destinationPauses, this.#prepare, destination);
  }

  pausedDestinations(): Promise<DestinationPause[]> {
    return listPausedDestinations(this.#database, this.#destinationPauses, this.#prepare);
  }

  relayGroup(): Promise<RelayGroup> {
    return readRelayGroupPartitions(this.#database, this.#relayGroup, this.#prepare);
  }

  listPending(query: PendingQuery): Promise<PendingMessage[]> {
    return listPending(this.#database, this.#pending, this.#prepare, query);
  }

  inspectPending(id: string, options?: { readonly body?: boolean }): Promise<PendingMessageDetail | undefined> {
    return inspectPending(this.#database, this.#pending, this.#prepare, id, options);
  }

  deletePending(ids: readonly string[]): Promise<number> {
    return deletePending(this.#database, this.#pending, this.#prepare, ids);
  }
}
