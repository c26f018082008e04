import { ConfigurationError } from '../../../core/errors.js';
import type { TopicLag } from '../../../core/ports.js';
import { MAX_TOPIC_LAG_LIMIT } from '../../postgres/operator/topic-lag.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS, type SqliteTableNames } from '../migrations.js';

interface LagRow {
  topic: string;
  pending: number;
  oldest_pending_age_seconds: number;
}

/**
 * Pending messages (due or scheduled) per topic and each topic's oldest age by the database clock, largest backlog
 * first, then by topic. It reads every pending row (the pending index and the table): for operators, not scrapes.
 */
export function readTopicLag(database: SqliteDatabase, names: SqliteTableNames, limit: number): Promise<TopicLag[]> {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_TOPIC_LAG_LIMIT) {
    return Promise.reject(new ConfigurationError('OUTBOXER_INVALID_OPTION', `topicLag limit must be a whole number from 1 to ${MAX_TOPIC_LAG_LIMIT}; got ${String(limit)}`, { options: ['limit'] }));
  }
  const sql = `SELECT topic, count(*) AS pending, max(0, (${SQLITE_NOW_MS} - min(created_at)) / 1000.0) AS oldest_pending_age_seconds
    FROM ${names.outbox} WHERE state = 'pending'
    GROUP BY topic
    ORDER BY count(*) DESC, topic
    LIMIT ?`;
  return database.read(() =>
    (database.all(sql, [limit]) as unknown as LagRow[]).map((row) => ({
      topic: row.topic,
      pending: Number(row.pending),
      oldestPendingAgeSeconds: Number(row.oldest_pending_age_seconds),
    })),
  );
}
