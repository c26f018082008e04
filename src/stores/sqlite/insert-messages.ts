import { OutboxerError } from '../../core/errors.js';
import { bodyBytes, type NewOutboxMessage } from '../../core/message.js';
import type { SqliteHandle, SqliteStatementLike } from './database.js';
import { SQLITE_NOW_MS, type SqliteTableNames } from './migrations.js';

interface InsertStatements {
  readonly reserveKey: SqliteStatementLike;
  readonly findKey: SqliteStatementLike;
  readonly insert: SqliteStatementLike;
  readonly savepoint: SqliteStatementLike;
  readonly release: SqliteStatementLike;
  readonly rollbackTo: SqliteStatementLike;
}

/** Statements prepared once per caller connection and table (a connection's statements die with it). */
const prepared = new WeakMap<SqliteHandle, Map<string, InsertStatements>>();

function statementsFor(tx: SqliteHandle, names: SqliteTableNames): InsertStatements {
  let byTable = prepared.get(tx);
  if (byTable === undefined) prepared.set(tx, (byTable = new Map()));
  let statements = byTable.get(names.outbox);
  if (statements === undefined) {
    statements = Object.freeze({
      reserveKey: tx.prepare(`INSERT OR IGNORE INTO ${names.idempotency} (idempotency_key, message_id) VALUES (?, ?)`),
      findKey: tx.prepare(`SELECT message_id FROM ${names.idempotency} WHERE idempotency_key = ?`),
      // a delayed message is scheduled: due_at = its time (absolute, or the delay on the database clock)
      insert: tx.prepare(`INSERT INTO ${names.outbox} (id, topic, type, "key", payload, payload_bytes, content_type, headers, due_at)
        VALUES (@id, @topic, @type, @key, @payload, @payloadBytes, @contentType, @headers,
          CASE WHEN @availableAt IS NOT NULL THEN @availableAt WHEN @delayMs > 0 THEN ${SQLITE_NOW_MS} + @delayMs END)`),
      savepoint: tx.prepare('SAVEPOINT outboxer_insert'),
      release: tx.prepare('RELEASE outboxer_insert'),
      rollbackTo: tx.prepare('ROLLBACK TO outboxer_insert'),
    });
    byTable.set(names.outbox, statements);
  }
  return statements;
}

/**
 * Inserts in the caller's open transaction on its own connection, synchronously: reserves each idempotency key
 * (a repeated key, also within the batch, stores nothing and answers with the first message's id), then the rows
 * in input order. A savepoint makes the batch all or nothing without ending the caller's transaction.
 */
export function insertSqliteMessages(tx: SqliteHandle, names: SqliteTableNames, messages: readonly NewOutboxMessage[]): string[] {
  if (typeof tx !== 'object' || tx === null || typeof tx.prepare !== 'function' || tx.inTransaction !== true) {
    throw new OutboxerError(
      'OUTBOXER_NOT_IN_TRANSACTION',
      `enqueue into SQLite table ${names.table} needs a better-sqlite3 connection inside BEGIN ... COMMIT: run db.exec('BEGIN IMMEDIATE') first, or use outbox.transaction(store.database, async (tx) => ...)`,
    );
  }
  if (messages.length === 0) return [];
  const s = statementsFor(tx, names);
  s.savepoint.run();
  try {
    const ids = messages.map((m) => insertOne(s, m));
    s.release.run();
    return ids;
  } catch (error) {
    // SQLite ends the whole transaction itself on some errors (SQLITE_FULL, an I/O error): the savepoint is gone then
    if (tx.inTransaction) {
      s.rollbackTo.run();
      s.release.run();
    }
    throw error;
  }
}

function insertOne(s: InsertStatements, m: NewOutboxMessage): string {
  if (m.idempotencyKey !== null && s.reserveKey.run(m.idempotencyKey, m.id).changes === 0) {
    const first = s.findKey.get(m.idempotencyKey) as { message_id: string } | undefined;
    if (first !== undefined) return first.message_id;
  }
  const json = typeof m.body === 'string';
  s.insert.run({
    id: m.id,
    topic: m.topic,
    type: m.type,
    key: m.key,
    payload: json ? m.body : null,
    payloadBytes: json ? null : bodyBytes(m.body),
    contentType: m.contentType,
    headers: JSON.stringify(m.headers),
    availableAt: m.availableAt === null ? null : m.availableAt.getTime(),
    delayMs: m.delayMs,
  });
  return m.id;
}
