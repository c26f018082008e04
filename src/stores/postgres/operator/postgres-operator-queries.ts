import type { RelayGroup, TopicLag, TopicPause } from '../../../core/ports.js';
import type { PgDatabase } from '../database.js';
import type { NamedStatement } from '../named-statement.js';
import type { TableName } from '../sql.js';
import { listPausedTopics, pauseTopic, pausedTopicStatements, type PausedTopicStatements, resumeTopic } from './paused-topics.js';
import { readRelayGroupPartitions, relayGroupStatement } from './relay-group-partitions.js';
import { readTopicLag, topicLagStatement } from './topic-lag.js';

/**
 * The operator methods added for operations (issue 11) on PostgreSQL and PGlite: lag per topic, operator pauses
 * and the relay group. `PostgresOutboxStore` delegates to it; each statement is built once per table and
 * prepared where the driver allows it.
 */
export class PostgresOperatorQueries {
  readonly #database: PgDatabase;
  readonly #prepare: boolean;
  readonly #pauses: PausedTopicStatements;
  readonly #topicLag: NamedStatement;
  readonly #relayGroup: NamedStatement;

  constructor(database: PgDatabase, name: TableName, prepare: boolean) {
    this.#database = database;
    this.#prepare = prepare;
    this.#pauses = pausedTopicStatements(name);
    this.#topicLag = topicLagStatement(name);
    this.#relayGroup = relayGroupStatement(name);
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

  relayGroup(): Promise<RelayGroup> {
    return readRelayGroupPartitions(this.#database, this.#relayGroup, this.#prepare);
  }
}
