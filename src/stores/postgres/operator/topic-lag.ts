import { MAX_TOPIC_LAG_LIMIT } from '../../../core/ports/outbox-operator.js';
import { ConfigurationError } from '../../../core/errors.js';
import type { TopicLag } from '../../../core/ports.js';
import { quoteIdentifier } from '../../../core/identifiers.js';
import { RELAY_HOLD_PREFIX, relayPauseOf } from '../../../core/topic-pauses.js';
import type { SqlExecutor } from '../database.js';
import { namedStatement, type NamedStatement, runStatement } from '../named-statement.js';
import type { TableName } from '../sql.js';

interface LagRow {
  topic: string;
  destination: string | null;
  pending: number | string;
  oldest_pending_age_seconds: number | string;
  held: number | string;
  first_hold: string | null;
  last_hold: string | null;
}

/**
 * Pending messages (due or scheduled) per topic and destination (a topic fanned out has one group per
 * destination; NULL, the relay's own publisher, is a group of its own) and the age of each group's oldest, by
 * `created_at` on the database clock (as `stats` measures it); groups that relays hold for a missing destination
 * first, then the largest backlog first, then by topic and destination (NULL first).
 *
 * A relay-held row's `last_error` begins `destination missing since <ISO time>: ` (`relayHoldReason`), so the
 * same pass counts them, and the smallest and largest such text of a group (compared byte-wise, `COLLATE "C"`,
 * so the time decides) give the earliest episode and the latest error (`relayPauseOf`).
 *
 * Cost: it reads every pending row (the pending index and the heap, or a sequential scan) and aggregates in
 * memory, one group per topic and destination: measured on PostgreSQL 15 (2 cores) with 1M pending rows over 20 topics, 0.40 to
 * 0.56 s (a parallel sequential scan), as long as `stats` takes on the same table. It is for an operator's
 * request (the admin API, the CLI), never for a metrics scrape: the gauges read a few index entries instead.
 * The relay-hold columns cost about a fifth more (measured here on PostgreSQL, 1M pending rows of which 5% held: 0.25 s median
 * without them, 0.31 s with): a `LIKE` on a mostly NULL `last_error`, text compared only on held rows.
 */
export function topicLagStatement(name: TableName): NamedStatement {
  const t = `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
  const held = `last_error LIKE '${RELAY_HOLD_PREFIX}%'`;
  return namedStatement(`SELECT topic, destination, count(*) AS pending,
      greatest(0, EXTRACT(EPOCH FROM now() - min(created_at)))::float8 AS oldest_pending_age_seconds,
      count(*) FILTER (WHERE ${held}) AS held,
      min(last_error COLLATE "C") FILTER (WHERE ${held}) AS first_hold,
      max(last_error COLLATE "C") FILTER (WHERE ${held}) AS last_hold
    FROM ${t} WHERE state = 'pending'
    GROUP BY topic, destination
    ORDER BY count(*) FILTER (WHERE ${held}) > 0 DESC, count(*) DESC, topic, destination NULLS FIRST
    LIMIT $1::int`);
}

export async function readTopicLag(executor: SqlExecutor, statement: NamedStatement, prepare: boolean, limit: number): Promise<TopicLag[]> {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_TOPIC_LAG_LIMIT) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `topicLag limit must be a whole number from 1 to ${MAX_TOPIC_LAG_LIMIT}; got ${String(limit)}`, {
      options: ['limit'],
    });
  }
  const result = await runStatement(executor, statement, [limit], prepare);
  return (result.rows as LagRow[]).map((row) => ({
    topic: row.topic,
    destination: row.destination ?? null,
    pending: Number(row.pending),
    oldestPendingAgeSeconds: Number(row.oldest_pending_age_seconds),
    relayPause: relayPauseOf(Number(row.held), row.first_hold, row.last_hold),
  }));
}
