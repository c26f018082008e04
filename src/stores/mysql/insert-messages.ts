import { bodyBytes, bodyByteLength, type NewOutboxMessage } from '../../core/message.js';
import type { OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { notInTransaction } from '../shared/open-transaction.js';
import { MYSQL_NOW } from './migrations.js';
import type { MysqlTableNames } from './table-names.js';

/** Rows and body bytes per INSERT statement: well under MariaDB's default 16 MiB `max_allowed_packet` (binary bodies travel as hex). */
const MAX_ROWS_PER_STATEMENT = 500;
const MAX_BYTES_PER_STATEMENT = 4 * 1024 * 1024;

/**
 * The proof, inside every statement that writes: MariaDB's session says whether a transaction is open (or
 * autocommit is off, so that the statement begins one the caller commits). Outside one, the statements write
 * nothing, so no ROLLBACK or COMMIT queued between a check and the write can make a row commit on its own.
 * `'TRUE'` on MySQL, which lacks `@@in_transaction`: there the store proves it before the write (prove-transaction.ts).
 */
export type MysqlWriteGuard = '(@@in_transaction = 1 OR @@autocommit = 0)' | 'TRUE';
export const MARIADB_GUARD: MysqlWriteGuard = '(@@in_transaction = 1 OR @@autocommit = 0)';

/**
 * Inserts in the caller's transaction: reserves idempotency keys first (a repeated key stores nothing and answers
 * with the first message's id), then the rows in input order (ordered by their place in the batch; a batch too large
 * for one packet is split into several statements, still in order). Returns the effective id of each. Several
 * statements run under a savepoint: a statement that fails does not end a MariaDB transaction, so without it a
 * caller that caught the error and committed would keep keys reserved for messages never stored.
 */
export async function insertMessages(
  tx: OutboxTransaction<'mysql'>,
  names: MysqlTableNames,
  messages: readonly NewOutboxMessage[],
  guard: MysqlWriteGuard,
): Promise<readonly string[]> {
  if (messages.length === 0) return [];
  const keyed = messages.some((m) => m.idempotencyKey !== null);
  const several = keyed || [...statementChunks(messages)].length > 1;
  if (several) await tx.query('SAVEPOINT outboxer_insert', []);
  try {
    const ids = await insertGuarded(tx, names, messages, guard);
    if (several) await tx.query('RELEASE SAVEPOINT outboxer_insert', []);
    return ids;
  } catch (error) {
    if (several) await tx.query('ROLLBACK TO SAVEPOINT outboxer_insert', []).catch(() => undefined);
    throw error;
  }
}

async function insertGuarded(
  tx: OutboxTransaction<'mysql'>,
  names: MysqlTableNames,
  messages: readonly NewOutboxMessage[],
  guard: MysqlWriteGuard,
): Promise<readonly string[]> {
  const firstIds = await reserveIdempotencyKeys(tx, names, messages, guard);
  const ids = messages.map((m) => (m.idempotencyKey === null ? m.id : (firstIds.get(padded(m.idempotencyKey)) ?? m.id)));
  const fresh = firstIds.size === 0 ? messages : messages.filter((m, i) => ids[i] === m.id);
  for (const chunk of statementChunks(fresh)) {
    const rows = chunk.map(
      (m, i) =>
        `SELECT ? AS id, ? AS topic, ? AS type, ? AS k, ? AS payload, ? AS payload_bytes, ? AS content_type, ? AS headers, ? AS destination, ${dueAt(m)} AS due_at, ${i} AS ord`,
    );
    const inserted = await tx.query(
      `INSERT INTO ${names.outbox} (id, topic, type, \`key\`, payload, payload_bytes, content_type, headers, destination, due_at)
        SELECT r.id, r.topic, r.type, r.k, r.payload, r.payload_bytes, r.content_type, r.headers, r.destination, r.due_at
        FROM (${rows.join(' UNION ALL ')}) AS r WHERE ${guard} ORDER BY r.ord`,
      chunk.flatMap(rowParams),
    );
    if (inserted.affectedRows !== chunk.length) throw notInTransaction(tx, 'outside any transaction (autocommit: each statement would commit on its own)');
  }
  return ids;
}

/**
 * A delayed message (availableAt or delayMs) is scheduled: `due_at` = its time on the server's clock, computed by
 * the server from a number (a JS Date is never bound: the pool's timezone setting would shift it). A JS number
 * cannot change the SQL, so the fragment is chosen per row here and the value bound.
 */
function dueAt(m: NewOutboxMessage): string {
  if (m.availableAt !== null) return `TIMESTAMPADD(MICROSECOND, ?, TIMESTAMP '1970-01-01 00:00:00')`;
  if (m.delayMs > 0) return `TIMESTAMPADD(MICROSECOND, ?, ${MYSQL_NOW})`;
  return 'NULL';
}

function rowParams(m: NewOutboxMessage): unknown[] {
  const binary = typeof m.body !== 'string';
  // destination null: the relay's own publisher (`?? null`: a message built before fan-out, by a caller of the store itself)
  const row: unknown[] = [
    m.id,
    m.topic,
    m.type,
    m.key,
    binary ? null : m.body,
    binary ? bodyBytes(m.body) : null,
    m.contentType,
    JSON.stringify(m.headers),
    m.destination ?? null,
  ];
  if (m.availableAt !== null) row.push(m.availableAt.getTime() * 1000);
  else if (m.delayMs > 0) row.push(m.delayMs * 1000);
  return row;
}

function* statementChunks(messages: readonly NewOutboxMessage[]): Generator<NewOutboxMessage[]> {
  let chunk: NewOutboxMessage[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = bodyByteLength(m.body) * (typeof m.body === 'string' ? 1 : 2);
    if (chunk.length > 0 && (chunk.length >= MAX_ROWS_PER_STATEMENT || bytes + size > MAX_BYTES_PER_STATEMENT)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(m);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * The key as the idempotency table compares it: `utf8mb4_bin` is a PAD SPACE collation, so `k` and `k ` are one
 * key to the primary key (unlike PostgreSQL); the lookup of a reserved key must agree with the table.
 */
function padded(key: string): string {
  return key.replace(/ +$/, '');
}

/**
 * Maps each idempotency key of the batch to the id of the message stored (or now reserved) under it. Keys are
 * reserved in sorted order (concurrent batches lock them in the same order), the first message of a repeated key
 * winning. A concurrent insert of the same key waits on the primary key until the other transaction ends. The
 * read that follows is a locking read: it sees the latest committed row, not the caller's older snapshot.
 */
async function reserveIdempotencyKeys(
  tx: OutboxTransaction<'mysql'>,
  names: MysqlTableNames,
  messages: readonly NewOutboxMessage[],
  guard: MysqlWriteGuard,
): Promise<Map<string, string>> {
  const firstByKey = new Map<string, string>();
  for (const m of messages) {
    if (m.idempotencyKey !== null && !firstByKey.has(padded(m.idempotencyKey))) firstByKey.set(padded(m.idempotencyKey), m.id);
  }
  const firstIds = new Map<string, string>();
  if (firstByKey.size === 0) return firstIds;
  const rows = [...firstByKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // ON DUPLICATE KEY rather than INSERT IGNORE: IGNORE would also turn other errors into warnings. Placeholders
  // spelled out: an ORM's driver may not expand arrays as mysql2 does
  await tx.query(
    `INSERT INTO ${names.idempotency} (idempotency_key, message_id)
      SELECT r.k, r.m FROM (${rows.map(() => 'SELECT ? AS k, ? AS m').join(' UNION ALL ')}) AS r WHERE ${guard}
      ON DUPLICATE KEY UPDATE message_id = ${names.idempotency}.message_id`,
    rows.flat(),
  );
  // guarded as well: outside a transaction it finds nothing, so every message counts as new and the guarded insert refuses
  const found = await tx.query(
    `SELECT idempotency_key, message_id FROM ${names.idempotency} WHERE idempotency_key IN (${rows.map(() => '?').join(', ')}) AND ${guard} LOCK IN SHARE MODE`,
    rows.map(([key]) => key),
  );
  for (const row of found.rows) firstIds.set(padded(String(row.idempotency_key)), String(row.message_id));
  return firstIds;
}
