import { ConfigurationError } from '../../../core/errors.js';
import type { TopicLag } from '../../../core/ports.js';
import { RELAY_HOLD_PREFIX, relayPauseOf } from '../../../core/topic-pauses.js';
import { MAX_TOPIC_LAG_LIMIT } from '../../../core/ports/outbox-operator.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';

interface LagRow {
  topic: string;
  destination: string | null;
  pending: number;
  oldest_pending_age_seconds: number;
  held: number;
  first_hold: string | null;
  last_hold: string | null;
}

// substr, not LIKE: SQLite's LIKE ignores ASCII case; min and max compare with BINARY, so the time decides
const HELD = `substr(last_error, 1, ${RELAY_HOLD_PREFIX.length}) = '${RELAY_HOLD_PREFIX}'`;

/**
 * Pending messages (due or scheduled) per topic and destination (a topic fanned out has one group per destination;
 * NULL, the relay's own publisher, is a group of its own) and each group's oldest age by the database clock; groups
 * that relays hold for a missing destination first (`relayHoldReason` in `last_error`), then the largest backlog
 * first, then by topic and destination (NULL first). It reads every pending row (the pending index and the table):
 * for operators, not scrapes.
 */
export function readTopicLag(database: SqliteDatabase, names: SqliteTableNames, limit: number): Promise<TopicLag[]> {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_TOPIC_LAG_LIMIT) {
    return Promise.reject(
      new ConfigurationError('OUTBOXER_INVALID_OPTION', `topicLag limit must be a whole number from 1 to ${MAX_TOPIC_LAG_LIMIT}; got ${String(limit)}`, {
        options: ['limit'],
      }),
    );
  }
  const sql = `SELECT topic, destination, count(*) AS pending, max(0, (${SQLITE_NOW_MS} - min(created_at)) / 1000.0) AS oldest_pending_age_seconds,
      count(*) FILTER (WHERE ${HELD}) AS held, min(last_error) FILTER (WHERE ${HELD}) AS first_hold, max(last_error) FILTER (WHERE ${HELD}) AS last_hold
    FROM ${names.outbox} WHERE state = 'pending'
    GROUP BY topic, destination
    ORDER BY count(*) FILTER (WHERE ${HELD}) > 0 DESC, count(*) DESC, topic, destination
    LIMIT ?`;
  return database.read(() =>
    (database.all(sql, [limit]) as unknown as LagRow[]).map((row) => ({
      topic: row.topic,
      destination: row.destination ?? null,
      pending: Number(row.pending),
      oldestPendingAgeSeconds: Number(row.oldest_pending_age_seconds),
      relayPause: relayPauseOf(Number(row.held), row.first_hold, row.last_hold),
    })),
  );
}
