import { randomUUID } from 'node:crypto';
import { bodyBytes, type NewOutboxMessage } from '../../core/message.js';
import type { OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { notInTransaction, vouchedOpen } from '../shared/open-transaction.js';
import { codeOf } from './connection-errors.js';
import type { NamedStatement } from './named-statement.js';
import { PROBE_SQL, type WriterStatements } from './writer-statements.js';

export interface PostgresWriter {
  readonly statements: { readonly vouched: WriterStatements; readonly guarded: WriterStatements };
  /** Whether statements may be prepared by name (the store's `preparedStatements`). */
  readonly prepare: boolean;
}

/**
 * Inserts in the caller's transaction: reserves idempotency keys first (a repeated key stores nothing and
 * answers with the first message's id), then the rows. Returns the effective id of each message, in order.
 * A transaction its driver does not vouch for is probed, and its statements guarded (writer-statements.ts).
 */
export async function insertMessages(
  tx: OutboxTransaction<'postgres'>,
  writer: PostgresWriter,
  messages: readonly NewOutboxMessage[],
): Promise<readonly string[]> {
  if (messages.length === 0) return [];
  try {
    return await insertProven(tx, writer, messages);
  } catch (error) {
    // 25P02: the transaction failed earlier and ignores every statement until its ROLLBACK
    if (codeOf(error) === '25P02') throw notInTransaction(tx, 'whose transaction failed and waits for its ROLLBACK');
    throw error;
  }
}

async function insertProven(tx: OutboxTransaction<'postgres'>, writer: PostgresWriter, messages: readonly NewOutboxMessage[]): Promise<readonly string[]> {
  const vouched = await vouchedOpen(tx);
  const token = vouched ? undefined : randomUUID();
  if (token !== undefined) await tx.query(PROBE_SQL, [token]);
  const statements = vouched ? writer.statements.vouched : writer.statements.guarded;
  const run = (statement: NamedStatement, params: unknown[]) =>
    tx.query(statement.text, token === undefined ? params : [...params, token], {
      ...(writer.prepare && statement.prepare ? { name: statement.name } : {}),
      vouched,
    });
  const firstIds = await reserveIdempotencyKeys(run, statements, messages);
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
    // ISO text, not Date objects: every driver and ORM binds text the same way
    fresh.map((m) => m.availableAt?.toISOString() ?? null),
    fresh.map((m) => m.delayMs),
    // Base64 text in a text[] parameter: every driver binds it the same way (a bytea[] of buffers it does not).
    fresh.map((m) => (typeof m.body === 'string' ? null : bodyBytes(m.body).toString('base64'))),
    fresh.map((m) => m.contentType),
    // null: the relay's own publisher (`?? null`: a message built before fan-out, by a caller of the store itself)
    fresh.map((m) => m.destination ?? null),
  ];
  const inserted = await run(statements.insert, columns);
  if (inserted.affectedRows !== fresh.length)
    throw notInTransaction(tx, 'outside any transaction block (the database ran each statement as a transaction of its own)');
  return ids;
}

type Run = (statement: NamedStatement, params: unknown[]) => Promise<{ readonly rows: readonly Record<string, unknown>[] }>;

/** Maps each idempotency key of the batch to the id of the message stored (or now reserved) under it. */
async function reserveIdempotencyKeys(run: Run, statements: WriterStatements, messages: readonly NewOutboxMessage[]): Promise<Map<string, string>> {
  const keyed = messages.filter((m) => m.idempotencyKey !== null);
  const firstIds = new Map<string, string>();
  if (keyed.length === 0) return firstIds;
  const reserved = await run(statements.reserveKeys, [keyed.map((m) => m.idempotencyKey), keyed.map((m) => m.id)]);
  for (const row of reserved.rows) firstIds.set(String(row.idempotency_key), String(row.message_id));
  const missing = [...new Set(keyed.map((m) => m.idempotencyKey as string))].filter((k) => !firstIds.has(k));
  if (missing.length > 0) {
    const found = await run(statements.findKeys, [missing]);
    for (const row of found.rows) firstIds.set(String(row.idempotency_key), String(row.message_id));
  }
  return firstIds;
}
