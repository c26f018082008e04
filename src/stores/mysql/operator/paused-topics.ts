import { ConfigurationError } from '../../../core/errors.js';
import type { TopicPause } from '../../../core/ports.js';
import { checkTopicPause, MAX_PAUSED_TOPICS } from '../../../core/topic-pause-input.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';
import { isoTime } from './mysql-time.js';

/**
 * Pauses `topic` for every relay; false when it was paused already (the first reason and time stay). `INSERT
 * IGNORE` for "already paused": `ON DUPLICATE KEY UPDATE` would count the untouched row as affected when the pool
 * reports found rows (mysql2's default). The count is a few index entries; two pauses racing past it add one each.
 */
export async function pauseTopic(executor: MysqlExecutor, names: MysqlTableNames, topic: string, reason: string): Promise<boolean> {
  const input = checkTopicPause(topic, reason);
  const inserted = await executor.query(
    `INSERT IGNORE INTO ${names.pausedTopics} (topic, reason)
      SELECT ?, ? FROM DUAL WHERE (SELECT COUNT(*) FROM ${names.pausedTopics}) < ${MAX_PAUSED_TOPICS}`,
    [input.topic, input.reason],
  );
  if (inserted.affectedRows === 1) return true;
  const listed = await listPausedTopics(executor, names);
  if (listed.some((pause) => pause.topic === input.topic)) return false;
  throw new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `cannot pause topic ${JSON.stringify(input.topic)}: ${listed.length} topics are paused already, the most a table allows (${MAX_PAUSED_TOPICS}); resume some first`,
    { options: ['topic'] },
  );
}

/** Ends the pause of `topic`; false when it was not paused. */
export async function resumeTopic(executor: MysqlExecutor, names: MysqlTableNames, topic: string): Promise<boolean> {
  const input = checkTopicPause(topic);
  const deleted = await executor.query(`DELETE FROM ${names.pausedTopics} WHERE topic = ?`, [input.topic]);
  return deleted.affectedRows === 1;
}

/** The paused topics, oldest pause first: what operators list and every relay's reader reads each period. */
export async function listPausedTopics(executor: MysqlExecutor, names: MysqlTableNames): Promise<TopicPause[]> {
  const result = await executor.query(`SELECT topic, reason, ${isoTime('paused_at')} AS paused_at FROM ${names.pausedTopics} ORDER BY paused_at, topic`);
  return result.rows.map((row) => ({ topic: String(row.topic), reason: String(row.reason), pausedAt: new Date(String(row.paused_at)) }));
}
