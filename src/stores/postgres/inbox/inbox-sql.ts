import { MAX_TABLE_NAME_BYTES, quoteIdentifier, validateIdentifier } from '../../../core/identifiers.js';
import type { TableName } from '../sql.js';
import { IN_TRANSACTION_SETTING } from '../writer-statements.js';

/** Table names leave room for the index names derived from them within Postgres's 63 bytes. */

export function resolveInboxTableName(schema: string, table: string): TableName {
  return Object.freeze({
    schema: validateIdentifier(schema, 'inbox schema'),
    table: validateIdentifier(table, 'inbox table', MAX_TABLE_NAME_BYTES),
  });
}

/** Every statement the inbox store runs, built once from validated, quoted names. */
export function buildInboxStatements(name: TableName) {
  const t = `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
  return Object.freeze({
    /*
     * New entry: inserted as processed (invisible until the handler's transaction commits). Existing entry:
     * taken over only while it is 'failed'. Either way the row (or its index entry) stays locked until the
     * transaction ends, so a concurrent copy of the message waits here, then finds it settled.
     */
    claim: `INSERT INTO ${t} AS i (consumer, message_id, type, topic, key, state, attempts, processed_at)
      VALUES ($1, $2::uuid, $3, $4, $5, 'processed', 1, clock_timestamp())
      ON CONFLICT (consumer, message_id) DO UPDATE
        SET state = 'processed', attempts = i.attempts + 1, processed_at = clock_timestamp(), updated_at = clock_timestamp()
        WHERE i.state = 'failed'
      RETURNING i.attempts`,
    /*
     * The claim for a handle its driver does not vouch for, run right after the writer's probe (PROBE_SQL). The
     * probe's transaction-local setting still holds its token ($6) only inside the transaction block the probe ran in: a handle
     * outside any block (autocommit, a pool, a transaction that ended) ran the probe in an implicit transaction of
     * its own, so here the setting is gone and nothing is inserted or taken over. The proof is part of the writing
     * statement itself, and `open` says which it was, so that "nothing claimed" is never read as "already settled".
     */
    guardedClaim: `WITH proof AS (SELECT current_setting('${IN_TRANSACTION_SETTING}', true) = $6::text AS open),
      claimed AS (
        INSERT INTO ${t} AS i (consumer, message_id, type, topic, key, state, attempts, processed_at)
        SELECT $1::text, $2::uuid, $3::text, $4::text, $5::text, 'processed', 1, clock_timestamp() FROM proof WHERE proof.open
        ON CONFLICT (consumer, message_id) DO UPDATE
          SET state = 'processed', attempts = i.attempts + 1, processed_at = clock_timestamp(), updated_at = clock_timestamp()
          WHERE i.state = 'failed'
        RETURNING i.attempts)
      SELECT (SELECT open IS TRUE FROM proof)::int AS open, (SELECT attempts FROM claimed) AS attempts`,
    /*
     * `claim` for a batch of distinct ids, in id order, so that two batches sharing ids lock them in the same order.
     * An id not returned was settled before (processed or dead): `stateOfMany` says which.
     */
    claimMany: `INSERT INTO ${t} AS i (consumer, message_id, type, topic, key, state, attempts, processed_at)
      SELECT $1::text, m.id, m.type, m.topic, m.key, 'processed', 1, clock_timestamp()
      FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[]) AS m(id, type, topic, key)
      ORDER BY m.id
      ON CONFLICT (consumer, message_id) DO UPDATE
        SET state = 'processed', attempts = i.attempts + 1, processed_at = clock_timestamp(), updated_at = clock_timestamp()
        WHERE i.state = 'failed'
      RETURNING i.message_id::text AS id, i.attempts`,
    stateOf: `SELECT state, attempts FROM ${t} WHERE consumer = $1 AND message_id = $2::uuid`,
    stateOfMany: `SELECT message_id::text AS id, state, attempts FROM ${t} WHERE consumer = $1 AND message_id = ANY($2::uuid[])`,

    recordFailure: `INSERT INTO ${t} AS i (consumer, message_id, type, topic, key, state, attempts, last_error, dead_at)
      VALUES ($1, $2::uuid, $3, $4, $5, CASE WHEN $7::bool OR $8::int <= 1 THEN 'dead' ELSE 'failed' END, 1, $6,
        CASE WHEN $7::bool OR $8::int <= 1 THEN clock_timestamp() END)
      ON CONFLICT (consumer, message_id) DO UPDATE
        SET attempts = i.attempts + 1, last_error = $6, updated_at = clock_timestamp(),
          state = CASE WHEN $7::bool OR i.attempts + 1 >= $8::int THEN 'dead' ELSE 'failed' END,
          dead_at = CASE WHEN $7::bool OR i.attempts + 1 >= $8::int THEN clock_timestamp() END
        WHERE i.state = 'failed'
      RETURNING i.state, i.attempts`,

    purgeProcessed: `DELETE FROM ${t} WHERE (consumer, message_id) IN (
        SELECT consumer, message_id FROM ${t}
        WHERE state = 'processed' AND processed_at < now() - $1::int8 * interval '1 millisecond'
        ORDER BY processed_at LIMIT $2)`,

    stats: `SELECT count(*) FILTER (WHERE state = 'processed')::int AS processed,
        count(*) FILTER (WHERE state = 'failed')::int AS failed,
        count(*) FILTER (WHERE state = 'dead')::int AS dead
      FROM ${t} WHERE $1::text IS NULL OR consumer = $1`,

    listDead: `SELECT consumer, message_id::text AS id, type, topic, key, attempts, COALESCE(last_error, '') AS reason,
        first_seen_at, dead_at
      FROM ${t} WHERE consumer = $1 AND state = 'dead' ORDER BY dead_at, message_id LIMIT $2`,
    purgeDead: `DELETE FROM ${t} WHERE consumer = $1 AND state = 'dead' AND message_id = ANY($2::uuid[])`,
    purgeDeadBatch: `DELETE FROM ${t} WHERE (consumer, message_id) IN (
        SELECT consumer, message_id FROM ${t} WHERE consumer = $1 AND state = 'dead' ORDER BY dead_at LIMIT $2)`,
  });
}

export type InboxStatements = ReturnType<typeof buildInboxStatements>;
