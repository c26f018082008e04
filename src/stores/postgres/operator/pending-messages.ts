import { quoteIdentifier } from '../../../core/identifiers.js';
import { checkMessageId, checkMessageIds, checkPendingQuery } from '../../../core/pending-message-input.js';
import type { PendingMessage, PendingMessageDetail, PendingQuery } from '../../../core/ports/pending-messages.js';
import { type MessageRow, toMessage } from '../../shared/message-rows.js';
import { affectedRows, type SqlExecutor } from '../database.js';
import { namedStatement, type NamedStatement, runStatement } from '../named-statement.js';
import { leaseTables } from '../leases/lease-tables.js';
import { destinationIs, destinationParams, type TableName } from '../sql.js';

/** Ids per delete statement: a long list is deleted in batches of this many. */
export const PENDING_DELETE_BATCH = 1000;

interface PendingRow {
  id: string;
  seq: string;
  topic: string;
  type: string;
  key: string | null;
  attempts: number;
  last_error: string | null;
  created_at: Date | string;
  due_at: Date | string | null;
  age_seconds: number | string;
  destination: string | null;
}

interface DetailRow extends PendingRow {
  content_type: string;
  header_names: string[] | null;
  body_bytes: number | string;
  payload_json?: string | null;
  payload_bytes?: MessageRow['payload_bytes'];
  headers?: MessageRow['headers'];
}

/** The statements of the pending-message tools for one table, built once from its validated, quoted name. */
export interface PendingMessageStatements {
  /**
   * `$1` topic or null, `$2` seconds or null, `$3` limit, `$4` whether to filter by destination and `$5` the
   * destination (null: none): the pending index in seq order, filters applied as it goes.
   */
  readonly list: NamedStatement;
  /**
   * The same for one key (`$6`), for the table's partition count: through the partition index `<t>_p<N>_idx`, in
   * the key's partition (about 1/N of the pending rows), the key a filter. The count is read first: the index
   * matches only the expression with the count written in it.
   */
  listOfKey(partitionCount: number): NamedStatement;
  /** The table's partition count, for `listOfKey`. */
  readonly partitionCount: NamedStatement;
  readonly inspect: NamedStatement;
  readonly inspectWithBody: NamedStatement;
  /** `$1` ids: only rows still pending. */
  readonly delete: NamedStatement;
}

export function pendingMessageStatements(name: TableName): PendingMessageStatements {
  const t = `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
  const columns = `id::text AS id, seq::text AS seq, topic, type, key, attempts, last_error, created_at, due_at,
      greatest(0, EXTRACT(EPOCH FROM now() - created_at))::float8 AS age_seconds, destination`;
  const filters = `($1::text IS NULL OR topic = $1::text)
      AND ($2::float8 IS NULL OR created_at <= now() - $2::float8 * interval '1 second')
      AND ${destinationIs(4)}`;
  const detail = `${columns}, content_type,
      ARRAY(SELECT jsonb_object_keys(headers) ORDER BY 1) AS header_names,
      COALESCE(octet_length(payload::text), octet_length(payload_bytes), 0)::int8 AS body_bytes`;
  return Object.freeze({
    // `o.seq`: a plain `seq` would name the output column (text), sorting 10 before 9 and passing the index by
    list: namedStatement(`SELECT ${columns} FROM ${t} o
      WHERE state = 'pending' AND ${filters}
      ORDER BY o.seq LIMIT $3::int`),
    listOfKey: (partitionCount: number) => {
      const partitionOf = (key: string, id: string) => `${quoteIdentifier(name.schema)}.outboxer_partition(${key}, ${id}, ${partitionCount})`;
      return namedStatement(`SELECT ${columns} FROM ${t} o
      WHERE state = 'pending' AND ${partitionOf('o.key', 'o.id')} = ${partitionOf('$6::text', 'NULL::uuid')} AND key = $6::text AND ${filters}
      ORDER BY o.seq LIMIT $3::int`);
    },
    partitionCount: namedStatement(`SELECT partition_count FROM ${leaseTables(name).partitioning}`),
    inspect: namedStatement(`SELECT ${detail} FROM ${t} WHERE id = $1::uuid AND state = 'pending'`),
    inspectWithBody: namedStatement(`SELECT ${detail}, payload::text AS payload_json, payload_bytes, headers
      FROM ${t} WHERE id = $1::uuid AND state = 'pending'`),
    // Waits for a completion that locked one of these rows (a few ms), then finds it deleted (published: nothing to
    // do) or updated (a backoff or a hold: still pending, deleted). A completion never waits for this statement.
    delete: namedStatement(`DELETE FROM ${t} WHERE state = 'pending' AND id = ANY($1::uuid[])`),
  });
}

export async function listPending(
  executor: SqlExecutor,
  statements: PendingMessageStatements,
  prepare: boolean,
  query: PendingQuery,
): Promise<PendingMessage[]> {
  const checked = checkPendingQuery(query);
  const { limit, topic, key, olderThanSeconds } = checked;
  const { destination } = checked;
  const params: unknown[] = [topic ?? null, olderThanSeconds ?? null, limit, ...destinationParams(destination)];
  const result =
    key === undefined
      ? await runStatement(executor, statements.list, params, prepare)
      : await runStatement(executor, statements.listOfKey(await partitionCountOf(executor, statements, prepare)), [...params, key], prepare);
  return (result.rows as PendingRow[]).map(toPending);
}

async function partitionCountOf(executor: SqlExecutor, statements: PendingMessageStatements, prepare: boolean): Promise<number> {
  const result = await runStatement(executor, statements.partitionCount, [], prepare);
  return Number((result.rows[0] as { partition_count: number }).partition_count);
}

export async function inspectPending(
  executor: SqlExecutor,
  statements: PendingMessageStatements,
  prepare: boolean,
  id: string,
  options: { readonly body?: boolean } = {},
): Promise<PendingMessageDetail | undefined> {
  const checked = checkMessageId(id);
  const withBody = options.body === true;
  const result = await runStatement(executor, withBody ? statements.inspectWithBody : statements.inspect, [checked], prepare);
  const row = result.rows[0] as DetailRow | undefined;
  if (row === undefined) return undefined;
  const detail = { ...toPending(row), contentType: row.content_type, headerNames: row.header_names ?? [], bodyBytes: Number(row.body_bytes) };
  if (!withBody) return detail;
  const { headers, body } = toMessage({ ...(row as unknown as MessageRow), payload_json: row.payload_json ?? null, payload_bytes: row.payload_bytes ?? null });
  return { ...detail, content: { headers, body } };
}

export async function deletePending(executor: SqlExecutor, statements: PendingMessageStatements, prepare: boolean, ids: readonly string[]): Promise<number> {
  const checked = checkMessageIds(ids);
  let deleted = 0;
  for (let start = 0; start < checked.length; start += PENDING_DELETE_BATCH) {
    deleted += affectedRows(await runStatement(executor, statements.delete, [checked.slice(start, start + PENDING_DELETE_BATCH)], prepare));
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
    createdAt: new Date(row.created_at),
    dueAt: row.due_at === null ? null : new Date(row.due_at),
    ageSeconds: Number(row.age_seconds),
    destination: row.destination ?? null,
  };
}
