import { MAX_TABLE_NAME_BYTES, quoteIdentifier, validateIdentifier } from '../../core/identifiers.js';
import type { QueryResultLike, SqlExecutor } from './database.js';
import { checkDestinationFilter } from '../../core/pending-message-input.js';

export interface TableName {
  readonly schema: string;
  readonly table: string;
}

export function resolveTableName(schema: string, table: string): TableName {
  return Object.freeze({
    schema: validateIdentifier(schema, 'schema'),
    table: validateIdentifier(table, 'table', MAX_TABLE_NAME_BYTES),
  });
}

/**
 * An optional filter on the destination, as two parameters: `$n` (boolean) whether to apply it, `$n+1` (text) the
 * destination, NULL matching the rows without one. `destinationParams` gives their values.
 */
export function destinationIs(n: number, column = 'destination'): string {
  return `($${n}::boolean IS NOT TRUE OR ${column} IS NOT DISTINCT FROM $${n + 1}::text)`;
}

/** The two parameters of `destinationIs` for a filter (`undefined`: none; `null`: the rows without a destination). */
export function destinationParams(filter: string | null | undefined): [boolean, string | null] {
  const destination = checkDestinationFilter(filter);
  return destination === undefined ? [false, null] : [true, destination];
}

/** Every statement the store runs, built once from validated, quoted names. */
export function buildStatements(name: TableName) {
  const t = `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
  const keys = `${quoteIdentifier(name.schema)}.${quoteIdentifier(`${name.table}_idempotency`)}`;
  const due = `(due_at IS NULL OR due_at <= now())`;
  return Object.freeze({
    purgeKeys: `DELETE FROM ${keys} WHERE idempotency_key IN (
        SELECT idempotency_key FROM ${keys} WHERE created_at < now() - $1::int8 * interval '1 millisecond'
        ORDER BY created_at LIMIT $2)`,

    purgePublished: `DELETE FROM ${t} WHERE seq IN (
        SELECT seq FROM ${t} WHERE state = 'published' AND published_at < now() - $1::int8 * interval '1 millisecond'
        ORDER BY published_at LIMIT $2)`,

    stats: `SELECT
        count(*) FILTER (WHERE state = 'pending' AND ${due})::int AS pending,
        count(*) FILTER (WHERE state = 'pending' AND NOT ${due})::int AS scheduled,
        count(*) FILTER (WHERE state = 'published')::int AS published,
        count(*) FILTER (WHERE state = 'dead')::int AS dead,
        COALESCE((SELECT EXTRACT(EPOCH FROM now() - created_at)::float8 FROM ${t}
          WHERE state = 'pending' ORDER BY seq LIMIT 1), 0) AS oldest_pending_age_seconds
      FROM ${t}`,

    /* The destination filter of dead messages: `$f` true applies it, and `$f+1` is the destination (NULL: the relay's own publisher). */
    listDead: `SELECT id::text AS id, topic, type, key, attempts, COALESCE(last_error, '') AS reason, created_at, dead_at, destination
      FROM ${t} WHERE state = 'dead' AND ${destinationIs(2)} ORDER BY dead_at, seq LIMIT $1`,
    /* `due_at`: a retried row lies below every v2 position, so only the due branch of a v2 read finds it. */
    retryDead: `UPDATE ${t} SET state = 'pending', attempts = 0, due_at = now(), dead_at = NULL
      WHERE state = 'dead' AND id = ANY($1::uuid[]) AND ${destinationIs(2)}`,
    retryDeadBatch: `UPDATE ${t} SET state = 'pending', attempts = 0, due_at = now(), dead_at = NULL
      WHERE seq IN (SELECT seq FROM ${t} WHERE state = 'dead' AND ${destinationIs(2)} ORDER BY seq LIMIT $1)`,
    purgeDead: `DELETE FROM ${t} WHERE state = 'dead' AND id = ANY($1::uuid[]) AND ${destinationIs(2)}`,
    purgeDeadBatch: `DELETE FROM ${t} WHERE seq IN (SELECT seq FROM ${t} WHERE state = 'dead' AND ${destinationIs(2)} ORDER BY seq LIMIT $1)`,
  });
}

export type Statements = ReturnType<typeof buildStatements>;

/** Runs one of the store's statements by name on an executor (prepared where the driver allows it). */
export type RunStatement = (executor: SqlExecutor, statement: keyof Statements, params?: unknown[]) => Promise<QueryResultLike>;
