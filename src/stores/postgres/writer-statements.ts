import { quoteIdentifier } from '../../core/identifiers.js';
import { nameStatements, type NamedStatement } from './named-statement.js';
import type { TableName } from './sql.js';

/** The transaction-local setting the probe sets: it lives exactly as long as the caller's transaction block. */
export const IN_TRANSACTION_SETTING = 'outboxer.in_transaction';

/**
 * The probe for a handle whose driver cannot vouch for its transaction. Outside a transaction block, the setting
 * dies with the probe's own implicit transaction; inside one, it lasts until COMMIT or ROLLBACK. The guarded
 * statements write only where they still see it, so a handle outside any block writes nothing at all: the proof
 * is in the same statement as the write, not in a check before it, and no ROLLBACK or COMMIT queued between the two
 * can fool it. The value is new for every enqueue (a random token, the guarded statements' last parameter), so a
 * value set for the session, the role or the database never passes for the probe's.
 */
export const PROBE_SQL = `SELECT set_config('${IN_TRANSACTION_SETTING}', $1, true)`;

export interface WriterStatements {
  readonly insert: NamedStatement;
  readonly reserveKeys: NamedStatement;
  readonly findKeys: NamedStatement;
}

/** The writer's statements twice: `vouched` for a transaction the driver vouches for, `guarded` after the probe. */
export function buildWriterStatements(name: TableName): { readonly vouched: WriterStatements; readonly guarded: WriterStatements } {
  const guard = (parameter: number) => `current_setting('${IN_TRANSACTION_SETTING}', true) = $${parameter}::text`;
  return Object.freeze({ vouched: writerStatements(name, () => 'true'), guarded: writerStatements(name, guard) });
}

/** `guard(n)`: the condition, given the number its own parameter (the probe's token) takes after the statement's. */
function writerStatements(name: TableName, guard: (parameter: number) => string): WriterStatements {
  const t = `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
  const keys = `${quoteIdentifier(name.schema)}.${quoteIdentifier(`${name.table}_idempotency`)}`;
  return nameStatements({
    /* A delayed message (availableAt or delayMs) is scheduled: `due_at` = its available time, for the read's due branch. */
    insert: `INSERT INTO ${t} (id, topic, type, key, payload, payload_bytes, content_type, headers, due_at, destination)
      SELECT m.id, m.topic, m.type, m.key, m.payload::json, decode(m.payload_base64, 'base64'), m.content_type, m.headers::jsonb,
        CASE WHEN m.available_at IS NOT NULL THEN m.available_at
          WHEN m.delay_ms > 0 THEN clock_timestamp() + m.delay_ms * interval '1 millisecond' END, m.destination
      FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::int8[], $9::text[], $10::text[], $11::text[])
        WITH ORDINALITY AS m(id, topic, type, key, payload, headers, available_at, delay_ms, payload_base64, content_type, destination, ord)
      WHERE ${guard(12)}
      ORDER BY m.ord`,
    /* Concurrent enqueues of one key wait on the primary key, so exactly one of them stores its message. */
    reserveKeys: `INSERT INTO ${keys} (idempotency_key, message_id)
      SELECT k, m FROM unnest($1::text[], $2::uuid[]) AS r(k, m) WHERE ${guard(3)}
      ON CONFLICT (idempotency_key) DO NOTHING
      RETURNING idempotency_key, message_id::text AS message_id`,
    findKeys: `SELECT idempotency_key, message_id::text AS message_id FROM ${keys} WHERE idempotency_key = ANY($1::text[]) AND ${guard(2)}`,
  });
}
