import { checkMessageId, checkMessageIds, checkPendingQuery } from '../../../core/pending-message-input.js';
import type { PendingMessage, PendingMessageDetail, PendingQuery } from '../../../core/ports/pending-messages.js';
import { type MessageRow, toMessage } from '../../shared/message-rows.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';
import { DESTINATION_IS, destinationParams } from './sqlite-destination-filter.js';

/** Ids per delete statement: a long list is deleted in batches of this many, each its own write. */
const DELETE_BATCH = 1000;

interface PendingRow {
  id: string;
  seq: string;
  topic: string;
  type: string;
  key: string | null;
  attempts: number;
  last_error: string | null;
  created_at: number;
  due_at: number | null;
  age_seconds: number;
  destination: string | null;
}

interface DetailRow extends PendingRow {
  content_type: string;
  headers: string;
  body_bytes: number;
  payload_json?: string | null;
  payload_bytes?: Uint8Array | null;
}

const COLUMNS = `id, CAST(seq AS TEXT) AS seq, topic, type, "key" AS key, attempts, last_error, created_at, due_at,
    max(0, (${SQLITE_NOW_MS} - created_at) / 1000.0) AS age_seconds, destination`;

/**
 * Pending messages in seq order through the pending index, the filters applied as it goes: a filter that matches
 * few rows may read much of the backlog before it has `limit` (as `topicLag` reads all of it).
 */
export function listSqlitePending(database: SqliteDatabase, names: SqliteTableNames, query: PendingQuery): Promise<PendingMessage[]> {
  let checked: PendingQuery;
  try {
    checked = checkPendingQuery(query);
  } catch (error) {
    return Promise.reject(error);
  }
  const { limit, topic, key, olderThanSeconds } = checked;
  // the destination as checked, where the check passes it on; else as given (a parameter, compared for equality only)
  const destination = 'destination' in checked ? checked.destination : query.destination;
  // `o.seq`: a plain `seq` would name the output column (text), sorting 10 before 9 and passing the index by
  const sql = `SELECT ${COLUMNS} FROM ${names.outbox} AS o
    WHERE state = 'pending' AND (? IS NULL OR topic = ?) AND (? IS NULL OR "key" = ?)
      AND (? IS NULL OR created_at <= ${SQLITE_NOW_MS} - ? * 1000) AND ${DESTINATION_IS}
    ORDER BY o.seq LIMIT ?`;
  const both = (value: string | number | undefined) => [value ?? null, value ?? null];
  const params = [...both(topic), ...both(key), ...both(olderThanSeconds), ...destinationParams(destination), limit];
  return database.read(() => (database.all(sql, params) as unknown as PendingRow[]).map(toPending));
}

export function inspectSqlitePending(
  database: SqliteDatabase,
  names: SqliteTableNames,
  id: string,
  options: { readonly body?: boolean } = {},
): Promise<PendingMessageDetail | undefined> {
  let checked: string;
  try {
    checked = checkMessageId(id);
  } catch (error) {
    return Promise.reject(error);
  }
  const withBody = options.body === true;
  const sql = `SELECT ${COLUMNS}, content_type, headers,
      COALESCE(length(CAST(payload AS BLOB)), length(payload_bytes), 0) AS body_bytes
      ${withBody ? ', payload AS payload_json, payload_bytes' : ''}
    FROM ${names.outbox} WHERE id = ? AND state = 'pending'`;
  return database.read(() => {
    const row = database.get(sql, [checked]) as DetailRow | undefined;
    if (row === undefined) return undefined;
    const headers = JSON.parse(row.headers) as Record<string, string>;
    const detail = { ...toPending(row), contentType: row.content_type, headerNames: Object.keys(headers).sort(), bodyBytes: Number(row.body_bytes) };
    if (!withBody) return detail;
    const message = toMessage({
      ...(row as unknown as MessageRow),
      headers,
      created_at: new Date(row.created_at),
      payload_json: row.payload_json ?? null,
      payload_bytes: row.payload_bytes ?? null,
    });
    return { ...detail, content: { headers: message.headers, body: message.body } };
  });
}

/** Deletes the listed rows still pending; a relay's completion that comes later finds them gone and writes nothing for them. */
export async function deleteSqlitePending(database: SqliteDatabase, names: SqliteTableNames, ids: readonly string[]): Promise<number> {
  const checked = checkMessageIds(ids);
  const sql = `DELETE FROM ${names.outbox} WHERE state = 'pending' AND id IN (SELECT value FROM json_each(?))`;
  let deleted = 0;
  for (let start = 0; start < checked.length; start += DELETE_BATCH) {
    const batch = JSON.stringify(checked.slice(start, start + DELETE_BATCH));
    deleted += await database.write(() => database.run(sql, [batch]));
  }
  return deleted;
}

function toPending(row: PendingRow): PendingMessage {
  return {
    id: row.id,
    seq: row.seq,
    topic: row.topic,
    type: row.type,
    key: row.key,
    attempts: Number(row.attempts),
    lastError: row.last_error,
    createdAt: new Date(Number(row.created_at)),
    dueAt: row.due_at === null ? null : new Date(Number(row.due_at)),
    ageSeconds: Number(row.age_seconds),
    destination: row.destination ?? null,
  };
}
