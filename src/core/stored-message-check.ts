import { type OutboxerErrorCode, PublishError } from './errors.js';
import type { OutboxMessage } from './message.js';
import { headersFault, keyFault, topicFault, typeFault } from './message-rules.js';

/**
 * Refuses, before it reaches a broker, a stored message that breaks the rules of the table contract: rows written
 * by plain SQL before the table checked them at INSERT (PostgreSQL migration 10, MariaDB and SQLite migration 2),
 * or changed since by hand where no trigger looks. The error is permanent and its code parks the message dead
 * (`failureAction`), its reason in the library's words: `message <id>: topic "orders.#" is invalid: a topic is ...`.
 * `publishClaim` calls it before every publish, so no publisher has to; it costs a few pattern tests per message.
 */
export function checkStoredMessage(message: Pick<OutboxMessage, 'id' | 'topic' | 'type' | 'key' | 'headers'>): void {
  // one check after the other, without a closure or an array per message: it runs before every publish
  const topic = topicFault(message.topic);
  if (topic !== undefined) refuse('OUTBOXER_INVALID_TOPIC', message.id, topic);
  const type = typeFault(message.type);
  if (type !== undefined) refuse('OUTBOXER_TYPE_REQUIRED', message.id, type);
  const key = keyFault(message.key);
  if (key !== undefined) refuse('OUTBOXER_INVALID_KEY', message.id, key);
  const headers = headersFault(message.headers);
  if (headers !== undefined) refuse('OUTBOXER_INVALID_HEADER', message.id, headers);
}

function refuse(code: OutboxerErrorCode, id: string, problem: string): never {
  throw new PublishError(code, `message ${id}: ${problem} (stored before the table checked it)`, { permanent: true });
}
