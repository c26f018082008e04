import { bodyBytes, type NewOutboxMessage } from '../../core/message.js';
import type { SqlExecutor } from './database.js';
import type { RunStatement } from './sql.js';

/**
 * Inserts in the caller's transaction: reserves idempotency keys first (a repeated key stores nothing and
 * answers with the first message's id), then the rows. Returns the effective id of each message, in order.
 */
export async function insertMessages(tx: SqlExecutor, run: RunStatement, messages: readonly NewOutboxMessage[]): Promise<readonly string[]> {
  if (messages.length === 0) return [];
  const firstIds = await reserveIdempotencyKeys(tx, run, messages);
  const ids = messages.map((m) => (m.idempotencyKey === null ? m.id : (firstIds.get(m.idempotencyKey) ?? m.id)));
  const fresh = firstIds.size === 0 ? messages : messages.filter((m, i) => ids[i] === m.id);
  if (fresh.length === 0) return ids;
  const columns = [
    fresh.map((m) => m.id),
    fresh.map((m) => m.topic),
    fresh.map((m) => m.type),
    fresh.map((m) => m.key),
    fresh.map((m) => (typeof m.body === 'string' ? m.body : null)),
    fresh.map((m) => JSON.stringify(m.headers)),
    fresh.map((m) => m.availableAt),
    fresh.map((m) => m.delayMs),
    // Base64 text in a text[] parameter: every driver binds it the same way (a bytea[] of buffers it does not).
    fresh.map((m) => (typeof m.body === 'string' ? null : bodyBytes(m.body).toString('base64'))),
    fresh.map((m) => m.contentType),
  ];
  await run(tx, 'insert', columns);
  return ids;
}

/** Maps each idempotency key of the batch to the id of the message stored (or now reserved) under it. */
async function reserveIdempotencyKeys(tx: SqlExecutor, run: RunStatement, messages: readonly NewOutboxMessage[]): Promise<Map<string, string>> {
  const keyed = messages.filter((m) => m.idempotencyKey !== null);
  const firstIds = new Map<string, string>();
  if (keyed.length === 0) return firstIds;
  const reserved = await run(tx, 'reserveKeys', [keyed.map((m) => m.idempotencyKey), keyed.map((m) => m.id)]);
  for (const row of reserved.rows as { idempotency_key: string; message_id: string }[]) firstIds.set(row.idempotency_key, row.message_id);
  const missing = [...new Set(keyed.map((m) => m.idempotencyKey as string))].filter((k) => !firstIds.has(k));
  if (missing.length > 0) {
    const found = await run(tx, 'findKeys', [missing]);
    for (const row of found.rows as { idempotency_key: string; message_id: string }[]) firstIds.set(row.idempotency_key, row.message_id);
  }
  return firstIds;
}
