import { ConfigurationError } from '../../../core/errors.js';
import type { TopicPause } from '../../../core/ports.js';
import { checkTopicPause, MAX_PAUSED_TOPICS } from '../../../core/topic-pause-input.js';
import type { SqlExecutor } from '../database.js';
import { pausedTopicsTable } from '../migration-paused-topics.js';
import { namedStatement, type NamedStatement, runStatement } from '../named-statement.js';
import type { TableName } from '../sql.js';

interface PauseRow {
  topic: string;
  reason: string;
  paused_at: Date | string;
}

/** The statements of operator pauses for one table, built once from its validated, quoted name. */
export interface PausedTopicStatements {
  /** Inserts the pause unless the topic is paused already or MAX_PAUSED_TOPICS are; returns the row it inserted. */
  readonly pause: NamedStatement;
  readonly resume: NamedStatement;
  /** Oldest pause first: what operators list and every relay reads each period. */
  readonly list: NamedStatement;
}

export function pausedTopicStatements(name: TableName): PausedTopicStatements {
  const table = pausedTopicsTable(name);
  return Object.freeze({
    // the count is a few index entries (at most MAX_PAUSED_TOPICS); two pauses racing past it add one each, no more
    pause: namedStatement(`INSERT INTO ${table} (topic, reason)
      SELECT $1::text, $2::text WHERE (SELECT count(*) FROM ${table}) < ${MAX_PAUSED_TOPICS}
      ON CONFLICT (topic) DO NOTHING
      RETURNING topic`),
    resume: namedStatement(`DELETE FROM ${table} WHERE topic = $1::text RETURNING topic`),
    list: namedStatement(`SELECT topic, reason, paused_at FROM ${table} ORDER BY paused_at, topic`),
  });
}

/** Pauses `topic` for every relay; false when it was paused already (the first reason and time stay). */
export async function pauseTopic(executor: SqlExecutor, statements: PausedTopicStatements, prepare: boolean, topic: string, reason: string): Promise<boolean> {
  const input = checkTopicPause(topic, reason);
  const inserted = await runStatement(executor, statements.pause, [input.topic, input.reason], prepare);
  if (inserted.rows.length === 1) return true;
  const listed = await listPausedTopics(executor, statements, prepare);
  if (listed.some((pause) => pause.topic === input.topic)) return false;
  throw new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `cannot pause topic ${JSON.stringify(input.topic)}: ${listed.length} topics are paused already, the most a table allows (${MAX_PAUSED_TOPICS}); resume some first`,
    { options: ['topic'] },
  );
}

/** Ends the pause of `topic`; false when it was not paused. */
export async function resumeTopic(executor: SqlExecutor, statements: PausedTopicStatements, prepare: boolean, topic: string): Promise<boolean> {
  const input = checkTopicPause(topic);
  const deleted = await runStatement(executor, statements.resume, [input.topic], prepare);
  return deleted.rows.length === 1;
}

export async function listPausedTopics(executor: SqlExecutor, statements: PausedTopicStatements, prepare: boolean): Promise<TopicPause[]> {
  const result = await runStatement(executor, statements.list, [], prepare);
  return (result.rows as PauseRow[]).map((row) => ({ topic: row.topic, reason: row.reason, pausedAt: new Date(row.paused_at) }));
}
