import { bodyBytes, type NewOutboxMessage } from '../../core/message.js';
import type { OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { SQLITE_NOW_MS } from './migrations.js';
import type { SqliteTableNames } from './table-names.js';

/**
 * Inserts in the caller's open transaction: reserves each idempotency key (a repeated key, also within the batch,
 * stores nothing and answers with the first message's id), then the rows in input order. A savepoint makes the
 * batch all or nothing without ending the caller's transaction.
 */
export async function insertSqliteMessages(
  transaction: OutboxTransaction<'sqlite'>,
  names: SqliteTableNames,
  messages: readonly NewOutboxMessage[],
  proof: { readonly vouched: boolean },
): Promise<string[]> {
  if (messages.length === 0) return [];
  const options = { vouched: proof.vouched };
  const tx: Pick<OutboxTransaction<'sqlite'>, 'query'> = { query: (sql, params) => transaction.query(sql, params, options) };
  await tx.query('SAVEPOINT outboxer_insert', []);
  try {
    const ids: string[] = [];
    for (const message of messages) ids.push(await insertOne(tx, names, message));
    await tx.query('RELEASE outboxer_insert', []);
    return ids;
  } catch (error) {
    // SQLite ends the whole transaction itself on some errors (SQLITE_FULL, an I/O error): the savepoint is gone then
    await tx.query('ROLLBACK TO outboxer_insert', []).then(
      () => tx.query('RELEASE outboxer_insert', []),
      () => undefined,
    );
    throw error;
  }
}

async function insertOne(tx: Pick<OutboxTransaction<'sqlite'>, 'query'>, names: SqliteTableNames, m: NewOutboxMessage): Promise<string> {
  if (m.idempotencyKey !== null) {
    const reserved = await tx.query(`INSERT OR IGNORE INTO ${names.idempotency} (idempotency_key, message_id) VALUES (?, ?)`, [m.idempotencyKey, m.id]);
    if (reserved.affectedRows === 0) {
      const [first] = (await tx.query(`SELECT message_id FROM ${names.idempotency} WHERE idempotency_key = ?`, [m.idempotencyKey])).rows;
      if (first !== undefined) return String(first.message_id);
    }
  }
  const json = typeof m.body === 'string';
  const availableAt = m.availableAt === null ? null : m.availableAt.getTime();
  // a delayed message is scheduled: due_at = its time (absolute, or the delay on the database clock)
  await tx.query(
    `INSERT INTO ${names.outbox} (id, topic, type, "key", payload, payload_bytes, content_type, headers, destination, due_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, CASE WHEN ? IS NOT NULL THEN ? WHEN ? > 0 THEN ${SQLITE_NOW_MS} + ? END)`,
    [
      m.id,
      m.topic,
      m.type,
      m.key,
      json ? m.body : null,
      json ? null : bodyBytes(m.body),
      m.contentType,
      JSON.stringify(m.headers),
      m.destination ?? null,
      availableAt,
      availableAt,
      m.delayMs,
      m.delayMs,
    ],
  );
  return m.id;
}
