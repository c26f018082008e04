import type { PendingMessage, PendingMessageDetail } from '../core/ports/pending-messages.js';

/** A body as JSON shows it: a JSON body as the text stored (not parsed again), a binary one as base64. */
export type ShownBody = { readonly text: string } | { readonly base64: string };

/**
 * A pending message as the CLI's `--json` and the admin API show it: times as ISO text, `destination` null for
 * the relay's own publisher (`default`). A detail says whether
 * its content is shown (`payload: "shown"`, with `headers` and `body`) or not (`payload: "hidden"`, neither).
 */
export function pendingMessageJson(message: PendingMessage | PendingMessageDetail): Record<string, unknown> {
  const { id, seq, topic, type, key, attempts, lastError, createdAt, dueAt, ageSeconds } = message;
  // the destination as the store gives it: null for the relay's own publisher (`default`)
  const destination = message.destination ?? null;
  const listed = {
    id,
    seq,
    topic,
    destination,
    type,
    key,
    attempts,
    lastError,
    createdAt: createdAt.toISOString(),
    dueAt: dueAt?.toISOString() ?? null,
    ageSeconds,
  };
  if (!('bodyBytes' in message)) return listed;
  const { contentType, headerNames, bodyBytes, content } = message;
  const detail = { ...listed, contentType, headerNames, bodyBytes };
  if (content === undefined) return { ...detail, payload: 'hidden' };
  const body: ShownBody = typeof content.body === 'string' ? { text: content.body } : { base64: Buffer.from(content.body).toString('base64') };
  return { ...detail, payload: 'shown', headers: content.headers, body };
}
