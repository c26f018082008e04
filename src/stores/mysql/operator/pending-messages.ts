import { checkMessageId, checkMessageIds, checkPendingQuery } from '../../../core/pending-message-input.js';
import type { PendingMessage, PendingMessageDetail, PendingQuery } from '../../../core/ports/pending-messages.js';
import { type MessageRow, toMessage } from '../../shared/message-rows.js';
import type { MysqlExecutor } from '../database.js';
import { MYSQL_NOW } from '../migrations.js';
import { quoteMysql, type MysqlTableNames } from '../table-names.js';
import { isoTime, secondsSince } from './mysql-time.js';

/** Ids per delete statement: a long list is deleted in batches of this many. */
const DELETE_BATCH = 1000;

type Row = Record<string, unknown>;

const COLUMNS = `id, CAST(seq AS CHAR) AS seq, topic, type, \`key\`, attempts, last_error,
    ${isoTime('created_at')} AS created_at, ${isoTime('due_at')} AS due_at, GREATEST(0, ${secondsSince('created_at')}) AS age_seconds, destination`;

/**
 * Pending messages in seq order through the `(state, seq)` index, the filters applied as it goes: with a filter
 * that matches few rows it may read much of the backlog before it has `limit` (as `topicLag` reads all of it).
 */
export async function listPending(executor: MysqlExecutor, names: MysqlTableNames, query: PendingQuery): Promise<PendingMessage[]> {
  const checked = checkPendingQuery(query);
  const { limit, topic, key, olderThanSeconds } = checked;
  const { destination } = checked;
  const conditions = ["state = 'pending'"];
  const params: unknown[] = [];
  if (topic !== undefined) {
    conditions.push('topic = ?');
    params.push(topic);
  }
  if (key !== undefined) {
    conditions.push('`key` = ?');
    params.push(key);
  }
  if (olderThanSeconds !== undefined) {
    conditions.push(`created_at <= TIMESTAMPADD(SECOND, ?, ${MYSQL_NOW})`);
    params.push(-olderThanSeconds);
  }
  if (destination !== undefined) {
    // `<=>`: null picks the rows without a destination (the relay's own publisher)
    conditions.push('destination <=> ?');
    params.push(destination);
  }
  const { rows } = await executor.query(
    // `o.seq`: a plain `seq` would name the output column (text), sorting 10 before 9 and passing the index by
    `SELECT ${COLUMNS} FROM ${names.outbox} AS o FORCE INDEX (${quoteMysql(`${names.table}_state_idx`)})
      WHERE ${conditions.join(' AND ')} ORDER BY o.seq LIMIT ?`,
    [...params, limit],
  );
  return rows.map(toPending);
}

export async function inspectPending(
  executor: MysqlExecutor,
  names: MysqlTableNames,
  id: string,
  options: { readonly body?: boolean } = {},
): Promise<PendingMessageDetail | undefined> {
  const checked = checkMessageId(id);
  const withBody = options.body === true;
  const { rows } = await executor.query(
    `SELECT ${COLUMNS}, content_type, headers, COALESCE(LENGTH(payload), LENGTH(payload_bytes), 0) AS body_bytes
      ${withBody ? ', payload AS payload_json, payload_bytes' : ''}
      FROM ${names.outbox} WHERE id = ? AND state = 'pending'`,
    [checked],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const headers = JSON.parse(String(row.headers)) as Record<string, string>;
  const detail = { ...toPending(row), contentType: String(row.content_type), headerNames: Object.keys(headers).sort(), bodyBytes: Number(row.body_bytes) };
  if (!withBody) return detail;
  const message = toMessage({
    ...(row as unknown as MessageRow),
    headers,
    payload_json: (row.payload_json ?? null) as string | null,
    payload_bytes: (row.payload_bytes ?? null) as MessageRow['payload_bytes'],
  });
  return { ...detail, content: { headers: message.headers, body: message.body } };
}

/**
 * Deletes the listed rows still pending, reached by id from a derived list as the relay's completion reaches them
 * (`STRAIGHT_JOIN` and `FORCE INDEX` on the unique id index): `WHERE id IN (...)` may be planned as a scan that
 * locks and waits for rows outside the list, which relays' completions lock (see reader/complete-partitions.ts).
 */
export async function deletePending(executor: MysqlExecutor, names: MysqlTableNames, ids: readonly string[]): Promise<number> {
  const checked = checkMessageIds(ids);
  const listed = `JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(36) CHARACTER SET ascii COLLATE ascii_bin PATH '$')) AS j
      STRAIGHT_JOIN ${names.outbox} AS o FORCE INDEX (${quoteMysql(`${names.table}_id_key`)}) ON o.id = j.id`;
  let deleted = 0;
  for (let start = 0; start < checked.length; start += DELETE_BATCH) {
    const batch = checked.slice(start, start + DELETE_BATCH);
    deleted += (await executor.query(`DELETE o FROM ${listed} WHERE o.state = 'pending'`, [JSON.stringify(batch)])).affectedRows;
  }
  return deleted;
}

function toPending(row: Row): PendingMessage {
  return {
    id: String(row.id),
    seq: String(row.seq),
    topic: String(row.topic),
    type: String(row.type),
    key: row.key === null || row.key === undefined ? null : String(row.key),
    attempts: Number(row.attempts),
    lastError: row.last_error === null || row.last_error === undefined ? null : String(row.last_error),
    createdAt: new Date(String(row.created_at)),
    dueAt: row.due_at === null || row.due_at === undefined ? null : new Date(String(row.due_at)),
    ageSeconds: Number(row.age_seconds),
    destination: row.destination === null || row.destination === undefined ? null : String(row.destination),
  };
}
