import type { OutboxMessage } from '../../core/message.js';

/** A message row as the claim and the leased insert return it. */
export interface MessageRow {
  seq: string;
  id: string;
  topic: string;
  type: string;
  key: string | null;
  payload_json: string;
  headers: Record<string, string> | string;
  created_at: Date | string;
  attempts: number;
  last_error: string | null;
}

export function toMessage(row: MessageRow): OutboxMessage {
  return {
    id: row.id,
    seq: row.seq,
    topic: row.topic,
    type: row.type,
    key: row.key,
    payloadJson: row.payload_json,
    headers: typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : row.headers,
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
    attempts: row.attempts,
    lastError: row.last_error,
  };
}

/** Orders decimal strings of bigints without converting them. */
export function compareSeq(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
