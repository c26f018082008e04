import type { DeadMessage } from '../../../core/message.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS, type SqliteTableNames } from '../migrations.js';

/** `retryDead('all')` and `purgeDead('all')` change this many rows per write, so other writers get their turn between batches. */
export const DEAD_BATCH = 1000;

interface DeadRow {
  id: string;
  topic: string;
  type: string;
  key: string | null;
  attempts: number;
  reason: string;
  created_at: number;
  dead_at: number;
}

export function listDeadMessages(database: SqliteDatabase, names: SqliteTableNames, limit: number): Promise<DeadMessage[]> {
  const sql = `SELECT id, topic, type, "key" AS key, attempts, COALESCE(last_error, '') AS reason, created_at, dead_at
    FROM ${names.outbox} WHERE state = 'dead' ORDER BY dead_at, seq LIMIT ?`;
  return database.read(() =>
    (database.all(sql, [limit]) as unknown as DeadRow[]).map((row) => ({
      id: row.id,
      topic: row.topic,
      type: row.type,
      key: row.key,
      attempts: Number(row.attempts),
      reason: row.reason,
      createdAt: new Date(Number(row.created_at)),
      deadAt: new Date(Number(row.dead_at)),
    })),
  );
}

/**
 * Gives dead messages back as pending with fresh attempts, keeping their seq. `due_at` is set: a retried row lies
 * below every relay's position, so only a read's due branch finds it.
 */
export function retryDeadMessages(database: SqliteDatabase, names: SqliteTableNames, ids: readonly string[] | 'all'): Promise<number> {
  const set = `SET state = 'pending', attempts = 0, due_at = ${SQLITE_NOW_MS}, dead_at = NULL`;
  if (ids === 'all') {
    return inBatches(database, `UPDATE ${names.outbox} ${set} WHERE seq IN (SELECT seq FROM ${names.outbox} WHERE state = 'dead' ORDER BY seq LIMIT ?)`);
  }
  const sql = `UPDATE ${names.outbox} ${set} WHERE state = 'dead' AND id IN (SELECT value FROM json_each(?))`;
  return database.write(() => database.run(sql, [JSON.stringify(ids)]));
}

export function purgeDeadMessages(database: SqliteDatabase, names: SqliteTableNames, ids: readonly string[] | 'all'): Promise<number> {
  if (ids === 'all') {
    return inBatches(database, `DELETE FROM ${names.outbox} WHERE seq IN (SELECT seq FROM ${names.outbox} WHERE state = 'dead' ORDER BY seq LIMIT ?)`);
  }
  const sql = `DELETE FROM ${names.outbox} WHERE state = 'dead' AND id IN (SELECT value FROM json_each(?))`;
  return database.write(() => database.run(sql, [JSON.stringify(ids)]));
}

async function inBatches(database: SqliteDatabase, sql: string): Promise<number> {
  let total = 0;
  for (;;) {
    const changed = await database.write(() => database.run(sql, [DEAD_BATCH]));
    total += changed;
    if (changed < DEAD_BATCH) return total;
  }
}
