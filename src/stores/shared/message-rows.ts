import { OutboxerError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';

/** A message row as a read returns it. */
export interface MessageRow {
  seq: string;
  id: string;
  topic: string;
  type: string;
  key: string | null;
  /** The JSON body's text, or null for a binary body. */
  payload_json: string | null;
  /** The binary body: a Buffer from node-postgres, a Uint8Array from PGlite, `\\x…` hex text from other drivers. */
  payload_bytes: Uint8Array | string | null;
  content_type: string;
  headers: Record<string, string> | string;
  created_at: Date | string;
  attempts: number;
  last_error: string | null;
  /** Null for the relay's own publisher; absent from a read that does not select it (an older statement). */
  destination?: string | null;
}

export function toMessage(row: MessageRow): OutboxMessage {
  return {
    id: row.id,
    seq: row.seq,
    topic: row.topic,
    type: row.type,
    key: row.key,
    body: row.payload_json ?? bytesOf(row.id, row.payload_bytes),
    contentType: row.content_type,
    headers: typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : row.headers,
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
    attempts: row.attempts,
    lastError: row.last_error,
    destination: row.destination ?? null,
  };
}

function bytesOf(id: string, value: Uint8Array | string | null): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string' && value.startsWith('\\x')) return Buffer.from(value.slice(2), 'hex');
  throw new OutboxerError(
    'OUTBOXER_NOT_MIGRATED',
    `outbox message ${id} has neither a JSON nor a binary body; run \`outboxer migrate\` (version 5 adds the constraint that prevents it)`,
  );
}

/** The hold probe's column as the PostgreSQL and MariaDB reads return it, `<seq>:<ms until due>`, or null: what the row waits for. */
export function waitsForOf(waits: string | null): { readonly seq: string; readonly dueInMs: number } | null {
  if (waits === null) return null;
  const colon = waits.indexOf(':');
  return { seq: waits.slice(0, colon), dueInMs: Number(waits.slice(colon + 1)) };
}
