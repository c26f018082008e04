import type { DeadMessage } from '../../../core/message.js';
import type { DestinationFilter } from '../../../core/ports/outbox-operator.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';
import { DESTINATION_IS, destinationParams } from './sqlite-destination-filter.js';

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
  destination: string | null;
}

/** The dead index in the order they died, `filter.destination`'s only when given (a filter applied as it goes). */
export function listDeadMessages(database: SqliteDatabase, names: SqliteTableNames, limit: number, filter: DestinationFilter = {}): Promise<DeadMessage[]> {
  const sql = `SELECT id, topic, type, "key" AS key, attempts, COALESCE(last_error, '') AS reason, created_at, dead_at, destination
    FROM ${names.outbox} WHERE state = 'dead' AND ${DESTINATION_IS} ORDER BY dead_at, seq LIMIT ?`;
  return database.read(() =>
    (database.all(sql, [...destinationParams(filter.destination), limit]) as unknown as DeadRow[]).map((row) => ({
      id: row.id,
      topic: row.topic,
      type: row.type,
      key: row.key,
      attempts: Number(row.attempts),
      reason: row.reason,
      createdAt: new Date(Number(row.created_at)),
      deadAt: new Date(Number(row.dead_at)),
      destination: row.destination ?? null,
    })),
  );
}

/**
 * Gives dead messages back as pending with fresh attempts, keeping their seq. `due_at` is set: a retried row lies
 * below every relay's position, so only a read's due branch finds it. `filter.destination`, when given, limits
 * both `'all'` and the listed ids to that destination's rows.
 */
export function retryDeadMessages(
  database: SqliteDatabase,
  names: SqliteTableNames,
  ids: readonly string[] | 'all',
  filter: DestinationFilter = {},
): Promise<number> {
  const set = `SET state = 'pending', attempts = 0, due_at = ${SQLITE_NOW_MS}, dead_at = NULL`;
  const only = destinationParams(filter.destination);
  if (ids === 'all') {
    return inBatches(
      database,
      `UPDATE ${names.outbox} ${set} WHERE seq IN (SELECT seq FROM ${names.outbox} WHERE state = 'dead' AND ${DESTINATION_IS} ORDER BY seq LIMIT ?)`,
      only,
    );
  }
  const sql = `UPDATE ${names.outbox} ${set} WHERE state = 'dead' AND id IN (SELECT value FROM json_each(?)) AND ${DESTINATION_IS}`;
  return database.write(() => database.run(sql, [JSON.stringify(ids), ...only]));
}

/** Deletes dead messages; `filter.destination`, when given, limits both `'all'` and the listed ids to that destination's rows. */
export function purgeDeadMessages(
  database: SqliteDatabase,
  names: SqliteTableNames,
  ids: readonly string[] | 'all',
  filter: DestinationFilter = {},
): Promise<number> {
  const only = destinationParams(filter.destination);
  if (ids === 'all') {
    return inBatches(
      database,
      `DELETE FROM ${names.outbox} WHERE seq IN (SELECT seq FROM ${names.outbox} WHERE state = 'dead' AND ${DESTINATION_IS} ORDER BY seq LIMIT ?)`,
      only,
    );
  }
  const sql = `DELETE FROM ${names.outbox} WHERE state = 'dead' AND id IN (SELECT value FROM json_each(?)) AND ${DESTINATION_IS}`;
  return database.write(() => database.run(sql, [JSON.stringify(ids), ...only]));
}

async function inBatches(database: SqliteDatabase, sql: string, filter: readonly unknown[]): Promise<number> {
  let total = 0;
  for (;;) {
    const changed = await database.write(() => database.run(sql, [...filter, DEAD_BATCH]));
    total += changed;
    if (changed < DEAD_BATCH) return total;
  }
}
