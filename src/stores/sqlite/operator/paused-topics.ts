import { ConfigurationError } from '../../../core/errors.js';
import type { TopicPause } from '../../../core/ports.js';
import { checkTopicPause, MAX_PAUSED_TOPICS } from '../../../core/topic-pause-input.js';
import type { SqliteDatabase } from '../database.js';
import type { SqliteTableNames } from '../table-names.js';

interface PauseRow {
  topic: string;
  reason: string;
  paused_at: number;
}

/** Pauses `topic` for every relay; false when it was paused already (the first reason and time stay). */
export function pauseSqliteTopic(database: SqliteDatabase, names: SqliteTableNames, topic: string, reason: string): Promise<boolean> {
  let input: { readonly topic: string; readonly reason: string };
  try {
    input = checkTopicPause(topic, reason);
  } catch (error) {
    return Promise.reject(error);
  }
  return database.write(() => {
    if (database.get(`SELECT 1 AS found FROM ${names.pausedTopics} WHERE topic = ?`, [input.topic]) !== undefined) return false;
    const paused = Number(database.get(`SELECT count(*) AS n FROM ${names.pausedTopics}`)?.n);
    if (paused >= MAX_PAUSED_TOPICS) {
      throw new ConfigurationError(
        'OUTBOXER_INVALID_OPTION',
        `cannot pause topic ${JSON.stringify(input.topic)}: ${paused} topics are paused already, the most a table allows (${MAX_PAUSED_TOPICS}); resume some first`,
        { options: ['topic'] },
      );
    }
    database.run(`INSERT INTO ${names.pausedTopics} (topic, reason) VALUES (?, ?)`, [input.topic, input.reason]);
    return true;
  });
}

/** Ends the pause of `topic`; false when it was not paused. */
export function resumeSqliteTopic(database: SqliteDatabase, names: SqliteTableNames, topic: string): Promise<boolean> {
  let input: { readonly topic: string };
  try {
    input = checkTopicPause(topic);
  } catch (error) {
    return Promise.reject(error);
  }
  return database.write(() => database.run(`DELETE FROM ${names.pausedTopics} WHERE topic = ?`, [input.topic]) === 1);
}

/** The paused topics, oldest pause first, read in the caller's `read`/`write` work. */
export function selectPausedTopics(database: SqliteDatabase, names: SqliteTableNames): TopicPause[] {
  // paused_at has ms resolution: the rowid (always above every existing one) orders pauses of the same ms
  const rows = database.all(`SELECT topic, reason, paused_at FROM ${names.pausedTopics} ORDER BY paused_at, rowid`) as unknown as PauseRow[];
  return rows.map((row) => ({ topic: row.topic, reason: row.reason, pausedAt: new Date(Number(row.paused_at)) }));
}

/** The paused topics, oldest pause first: what operators list and every relay's reader reads each period. */
export function listPausedTopics(database: SqliteDatabase, names: SqliteTableNames): Promise<TopicPause[]> {
  return database.read(() => selectPausedTopics(database, names));
}
