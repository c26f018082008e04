import { quoteIdentifier, validateIdentifier } from '../../core/identifiers.js';
import type { QueryResultLike, SqlExecutor } from './database.js';

export interface TableName {
  readonly schema: string;
  readonly table: string;
}

/** Table names leave room for the index names derived from them within Postgres's 63 bytes. */
const MAX_TABLE_BYTES = 40;

export function resolveTableName(schema: string, table: string): TableName {
  return Object.freeze({
    schema: validateIdentifier(schema, 'schema'),
    table: validateIdentifier(table, 'table', MAX_TABLE_BYTES),
  });
}

/** Every statement the store runs, built once from validated, quoted names. */
export function buildStatements(name: TableName) {
  const t = `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
  const keys = `${quoteIdentifier(name.schema)}.${quoteIdentifier(`${name.table}_idempotency`)}`;
  const leaseFree = `(lease_until IS NULL OR lease_until <= now())`;
  /* The JSON body as its stored text (json keeps the producer's bytes; never jsonb, which rewrites them), or the binary body. */
  const bodyColumns = (row: string) => `${row}payload::text AS payload_json, ${row}payload_bytes, ${row}content_type`;
  const delayed = (row: string) => `(${row}.available_at IS NOT NULL OR ${row}.delay_ms > 0)`;
  const inputRows = `unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::int8[], $9::text[], $10::text[])
        WITH ORDINALITY AS m(id, topic, type, key, payload, headers, available_at, delay_ms, payload_base64, content_type, ord)`;
  return Object.freeze({
    /* A delayed message (availableAt or delayMs) is also scheduled for engine v2: `due_at` = its available time. */
    insert: `INSERT INTO ${t} (id, topic, type, key, payload, payload_bytes, content_type, headers, available_at, due_at)
      SELECT m.id, m.topic, m.type, m.key, m.payload::json, decode(m.payload_base64, 'base64'), m.content_type, m.headers::jsonb,
        a.available, CASE WHEN ${delayed('m')} THEN a.available END
      FROM ${inputRows}
      CROSS JOIN LATERAL (SELECT COALESCE(m.available_at, clock_timestamp() + m.delay_ms * interval '1 millisecond') AS available) a
      ORDER BY m.ord`,

    /*
     * The in-process fast path: rows are leased to the local relay as they are inserted, where the key
     * allows it (no pending row of that key other than this transaction's own leased ones), so the relay
     * publishes them right after the commit without a claim. Others wait for the normal claim.
     */
    insertLeased: `WITH input AS (
        SELECT m.*, COALESCE(m.available_at, clock_timestamp() + m.delay_ms * interval '1 millisecond') AS available
        FROM ${inputRows}
      ), decided AS (
        SELECT i.*, (i.available <= clock_timestamp() AND (i.key IS NULL OR NOT EXISTS (
          SELECT 1 FROM ${t} p WHERE p.key = i.key AND p.state = 'pending' AND p.lease_token IS DISTINCT FROM $12::uuid))) AS leased
        FROM input i
      )
      INSERT INTO ${t} (id, topic, type, key, payload, payload_bytes, content_type, headers, available_at, due_at, lease_owner, lease_token, lease_until, attempts)
      SELECT d.id, d.topic, d.type, d.key, d.payload::json, decode(d.payload_base64, 'base64'), d.content_type, d.headers::jsonb, d.available,
        CASE WHEN ${delayed('d')} THEN d.available END,
        CASE WHEN d.leased THEN $11 END, CASE WHEN d.leased THEN $12::uuid END,
        CASE WHEN d.leased THEN clock_timestamp() + $13::int8 * interval '1 millisecond' END,
        CASE WHEN d.leased THEN 1 ELSE 0 END
      FROM decided d ORDER BY d.ord
      RETURNING seq::text AS seq, id::text AS id, topic, type, key, ${bodyColumns('')}, headers, created_at,
        attempts, last_error, lease_token IS NOT NULL AS leased`,

    /* Concurrent enqueues of one key wait on the primary key, so exactly one of them stores its message. */
    reserveKeys: `INSERT INTO ${keys} (idempotency_key, message_id)
      SELECT k, m FROM unnest($1::text[], $2::uuid[]) AS r(k, m)
      ON CONFLICT (idempotency_key) DO NOTHING
      RETURNING idempotency_key, message_id::text AS message_id`,
    findKeys: `SELECT idempotency_key, message_id::text AS message_id FROM ${keys} WHERE idempotency_key = ANY($1::text[])`,
    purgeKeys: `DELETE FROM ${keys} WHERE idempotency_key IN (
        SELECT idempotency_key FROM ${keys} WHERE created_at < now() - $1::int8 * interval '1 millisecond'
        ORDER BY created_at LIMIT $2)`,

    /*
     * A row is a head when no earlier pending row shares its key: only heads can be claimed, so two
     * relays never hold the same key. The claimer of a head also takes the open run behind it (same
     * key, available, not leased), cut at the first row that is not, so a busy key moves in batches.
     * At most $5 keys are taken (unkeyed rows, having nothing behind them, are not counted); the batch
     * left after the heads is shared out evenly among the keys (rounded up, then cut to $1), so the work
     * per claim stays bounded by the batch size however long each key's backlog is, and keys beyond $5
     * stay free for other lanes and relays. Rows lower in seq that commit later are simply heads of a
     * later claim (no cursor, no gap).
     *
     * The search is bounded: only the first $6 claimable rows (in seq order, from seq $8 when given: a
     * hint from the previous claim) are checked for being heads, and more heads are kept than taken, so
     * that concurrent claims skip each other's locked heads and take the next ones. When the window was
     * full but gave fewer than $5 heads (a few keys with long backlogs, or keys held elsewhere), heads
     * beyond it are looked for too: keys by a skip scan over the pending key index (at most 4 x $7 keys
     * visited, $7 heads kept), unkeyed rows by their own index, so no key's backlog can hide the rest.
     */
    claim: `WITH RECURSIVE candidates AS MATERIALIZED (
        SELECT seq, key FROM ${t}
        WHERE state = 'pending' AND seq >= COALESCE($8::int8, 0)
          AND available_at <= now() AND (lease_until IS NULL OR lease_until <= now())
        ORDER BY seq LIMIT $6
      ), window_heads AS MATERIALIZED (
        SELECT c.seq FROM candidates c
        WHERE c.key IS NULL OR NOT EXISTS (
          SELECT 1 FROM ${t} p WHERE p.key = c.key AND p.state = 'pending' AND p.seq < c.seq)
        LIMIT GREATEST($1::int8, $7::int8)
      ), beyond AS MATERIALIZED (
        SELECT (SELECT count(*) FROM candidates) = $6 AND (SELECT count(*) FROM window_heads) < $5 AS needed,
          (SELECT max(seq) FROM candidates) AS last_seq
      ), distinct_keys(key, visited) AS (
        SELECT (SELECT min(k.key) FROM ${t} k WHERE k.state = 'pending' AND k.key IS NOT NULL), 1
        FROM beyond WHERE needed
        UNION ALL
        SELECT (SELECT min(k.key) FROM ${t} k WHERE k.state = 'pending' AND k.key > d.key), d.visited + 1
        FROM distinct_keys d WHERE d.key IS NOT NULL AND d.visited < 4 * $7
      ), outside_heads AS (
        SELECT f.seq FROM distinct_keys d
        CROSS JOIN LATERAL (
          SELECT x.seq, x.available_at, x.lease_until FROM ${t} x
          WHERE x.key = d.key AND x.state = 'pending' ORDER BY x.seq LIMIT 1
        ) f
        WHERE d.key IS NOT NULL AND f.available_at <= now() AND (f.lease_until IS NULL OR f.lease_until <= now())
          AND NOT EXISTS (SELECT 1 FROM candidates c WHERE c.seq = f.seq)
        LIMIT $7
      ), outside_unkeyed AS (
        SELECT x.seq FROM ${t} x, beyond b
        WHERE b.needed AND x.state = 'pending' AND x.key IS NULL AND x.seq > b.last_seq
          AND x.available_at <= now() AND (x.lease_until IS NULL OR x.lease_until <= now())
        ORDER BY x.seq LIMIT $1
      ), keyed_heads AS (
        SELECT o.seq, o.key FROM ${t} o
        WHERE o.seq IN (SELECT seq FROM window_heads UNION ALL SELECT seq FROM outside_heads) AND o.key IS NOT NULL
          AND o.state = 'pending' AND o.available_at <= now() AND (o.lease_until IS NULL OR o.lease_until <= now())
        ORDER BY o.seq
        LIMIT $5
        FOR UPDATE SKIP LOCKED
      ), unkeyed_heads AS (
        SELECT o.seq FROM ${t} o
        WHERE o.seq IN (SELECT seq FROM window_heads UNION ALL SELECT seq FROM outside_unkeyed) AND o.key IS NULL
          AND o.state = 'pending' AND o.available_at <= now() AND (o.lease_until IS NULL OR o.lease_until <= now())
        ORDER BY o.seq
        LIMIT $1
        FOR UPDATE SKIP LOCKED
      ), runs AS (
        SELECT r.seq FROM keyed_heads h CROSS JOIN LATERAL (
          SELECT x.seq, bool_and(x.available_at <= now() AND (x.lease_until IS NULL OR x.lease_until <= now()))
              OVER (ORDER BY x.seq) AS open
          FROM ${t} x
          WHERE x.key = h.key AND x.state = 'pending' AND x.seq > h.seq
          ORDER BY x.seq
          LIMIT (SELECT ($1 - count(*) + GREATEST(count(*), 1) - 1) / GREATEST(count(*), 1) FROM keyed_heads)
        ) r
        WHERE r.open
      ), picked AS (
        SELECT seq FROM (
          SELECT seq FROM keyed_heads UNION ALL SELECT seq FROM unkeyed_heads UNION ALL SELECT seq FROM runs
        ) s ORDER BY seq LIMIT $1
      )
      UPDATE ${t} u
      SET lease_owner = $2, lease_token = $3::uuid, lease_until = now() + $4::int8 * interval '1 millisecond',
        attempts = u.attempts + 1
      FROM picked
      WHERE u.seq = picked.seq AND u.state = 'pending' AND (u.lease_until IS NULL OR u.lease_until <= now())
      RETURNING u.seq::text AS seq, u.id::text AS id, u.topic, u.type, u.key, ${bodyColumns('u.')},
        u.headers, u.created_at, u.attempts, u.last_error, (SELECT min(seq) FROM candidates)::text AS lowest_candidate_seq`,

    deletePublished: `DELETE FROM ${t} WHERE id = ANY($2::uuid[]) AND lease_token = $1::uuid`,
    deletePublishedEach: `DELETE FROM ${t} u USING unnest($1::uuid[], $2::uuid[]) AS m(id, token)
      WHERE u.id = m.id AND u.lease_token = m.token RETURNING u.id::text AS id`,
    retainPublishedEach: `UPDATE ${t} u SET state = 'published', published_at = now(),
        lease_owner = NULL, lease_token = NULL, lease_until = NULL
      FROM unnest($1::uuid[], $2::uuid[]) AS m(id, token)
      WHERE u.id = m.id AND u.lease_token = m.token RETURNING u.id::text AS id`,
    retainPublished: `UPDATE ${t} SET state = 'published', published_at = now(),
        lease_owner = NULL, lease_token = NULL, lease_until = NULL
      WHERE id = ANY($2::uuid[]) AND lease_token = $1::uuid`,

    markFailed: `UPDATE ${t} u SET
        state = CASE WHEN f.dead THEN 'dead' ELSE 'pending' END,
        last_error = f.error,
        available_at = CASE WHEN f.dead THEN u.available_at ELSE now() + f.retry_ms * interval '1 millisecond' END,
        dead_at = CASE WHEN f.dead THEN now() END,
        lease_owner = NULL, lease_token = NULL, lease_until = NULL
      FROM unnest($2::uuid[], $3::text[], $4::int8[], $5::bool[]) AS f(id, error, retry_ms, dead)
      WHERE u.id = f.id AND u.lease_token = $1::uuid`,

    release: `UPDATE ${t} SET attempts = GREATEST(attempts - 1, 0), last_error = COALESCE($3, last_error),
        available_at = CASE WHEN $4::int8 IS NULL THEN available_at ELSE GREATEST(available_at, now() + $4::int8 * interval '1 millisecond') END,
        lease_owner = NULL, lease_token = NULL, lease_until = NULL
      WHERE id = ANY($2::uuid[]) AND lease_token = $1::uuid`,

    purgePublished: `DELETE FROM ${t} WHERE seq IN (
        SELECT seq FROM ${t} WHERE state = 'published' AND published_at < now() - $1::int8 * interval '1 millisecond'
        ORDER BY published_at LIMIT $2)`,

    stats: `SELECT
        count(*) FILTER (WHERE state = 'pending' AND available_at <= now() AND ${leaseFree})::int AS pending,
        count(*) FILTER (WHERE state = 'pending' AND available_at > now() AND ${leaseFree})::int AS scheduled,
        count(*) FILTER (WHERE state = 'pending' AND lease_until > now())::int AS in_flight,
        count(*) FILTER (WHERE state = 'published')::int AS published,
        count(*) FILTER (WHERE state = 'dead')::int AS dead,
        COALESCE((SELECT EXTRACT(EPOCH FROM now() - created_at)::float8 FROM ${t}
          WHERE state = 'pending' ORDER BY seq LIMIT 1), 0) AS oldest_pending_age_seconds
      FROM ${t}`,

    listDead: `SELECT id::text AS id, topic, type, key, attempts, COALESCE(last_error, '') AS reason, created_at, dead_at
      FROM ${t} WHERE state = 'dead' ORDER BY dead_at, seq LIMIT $1`,
    /* `due_at`: a retried row lies below every v2 position, so only the due branch of a v2 read finds it. */
    retryDead: `UPDATE ${t} SET state = 'pending', attempts = 0, available_at = now(), due_at = now(), dead_at = NULL
      WHERE state = 'dead' AND id = ANY($1::uuid[])`,
    retryDeadBatch: `UPDATE ${t} SET state = 'pending', attempts = 0, available_at = now(), due_at = now(), dead_at = NULL
      WHERE seq IN (SELECT seq FROM ${t} WHERE state = 'dead' ORDER BY seq LIMIT $1)`,
    purgeDead: `DELETE FROM ${t} WHERE state = 'dead' AND id = ANY($1::uuid[])`,
    purgeDeadBatch: `DELETE FROM ${t} WHERE seq IN (SELECT seq FROM ${t} WHERE state = 'dead' ORDER BY seq LIMIT $1)`,
  });
}

export type Statements = ReturnType<typeof buildStatements>;

/**
 * Statements never run as prepared statements. The claim's best plan depends on the backlog (a generic plan
 * cached while the table was empty could scan the whole pending index once it is not), and it runs once per
 * batch, so planning it each time costs little.
 */
export const PLANNED_PER_CALL: readonly (keyof Statements)[] = Object.freeze(['claim']);

/** Runs one of the store's statements by name on an executor (prepared where the driver allows it). */
export type RunStatement = (executor: SqlExecutor, statement: keyof Statements, params?: unknown[]) => Promise<QueryResultLike>;
