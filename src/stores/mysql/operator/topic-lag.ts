import { MAX_TOPIC_LAG_LIMIT } from '../../../core/ports/outbox-operator.js';
import { ConfigurationError } from '../../../core/errors.js';
import type { TopicLag } from '../../../core/ports.js';
import { RELAY_HOLD_PREFIX, relayPauseOf } from '../../../core/topic-pauses.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';
import { secondsSince } from './mysql-time.js';

/**
 * Pending messages (due or scheduled) per topic and destination (a topic fanned out has one entry per destination,
 * the relay's own publisher's with destination null) and the age of each one's oldest by `created_at` on the database
 * clock; topics that relays hold for a missing destination first (their rows' `last_error` begins
 * `destination missing since <ISO time>: `, compared byte-wise: the column is `utf8mb4_bin`), then the largest
 * backlog first, then by topic and destination (NULL first). It reads every pending row (the `(state, seq)` index and the rows): for an
 * operator's request, never for a metrics scrape.
 */
export async function readTopicLag(executor: MysqlExecutor, names: MysqlTableNames, limit: number): Promise<TopicLag[]> {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_TOPIC_LAG_LIMIT) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `topicLag limit must be a whole number from 1 to ${MAX_TOPIC_LAG_LIMIT}; got ${String(limit)}`, {
      options: ['limit'],
    });
  }
  const held = `COALESCE(last_error LIKE '${RELAY_HOLD_PREFIX}%', 0)`;
  const result = await executor.query(
    `SELECT topic, destination, COUNT(*) AS pending, GREATEST(0, ${secondsSince('MIN(created_at)')}) AS oldest_pending_age_seconds,
        SUM(${held}) AS held, MIN(CASE WHEN ${held} THEN last_error END) AS first_hold, MAX(CASE WHEN ${held} THEN last_error END) AS last_hold
      FROM ${names.outbox} WHERE state = 'pending'
      GROUP BY topic, destination
      ORDER BY SUM(${held}) > 0 DESC, COUNT(*) DESC, topic, destination
      LIMIT ?`,
    [limit],
  );
  return result.rows.map((row) => ({
    topic: String(row.topic),
    destination: textOrNull(row.destination),
    pending: Number(row.pending),
    oldestPendingAgeSeconds: Number(row.oldest_pending_age_seconds),
    relayPause: relayPauseOf(Number(row.held), textOrNull(row.first_hold), textOrNull(row.last_hold)),
  }));
}

function textOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}
