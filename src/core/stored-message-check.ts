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
  const faults: readonly [OutboxerErrorCode, () => string | undefined][] = [
    ['OUTBOXER_INVALID_TOPIC', () => topicFault(message.topic)],
    ['OUTBOXER_TYPE_REQUIRED', () => typeFault(message.type)],
    ['OUTBOXER_INVALID_KEY', () => keyFault(message.key)],
    ['OUTBOXER_INVALID_HEADER', () => headersFault(message.headers)],
  ];
  for (const [code, fault] of faults) {
    const problem = fault();
    if (problem !== undefined) {
      throw new PublishError(code, `message ${message.id}: ${problem} (stored before the table checked it)`, { permanent: true });
    }
  }
}
