import type { InboxDeadEntry } from '../../core/ports/inbox-store.js';

/**
 * A dead inbox row as every SQL inbox store selects it (`consumer, id, type, topic, key, attempts, reason,
 * first_seen_at, dead_at`); times as the driver gives them: a Date, ISO text, or ms since the epoch.
 */
export function inboxDeadEntryOf(row: Readonly<Record<string, unknown>>): InboxDeadEntry {
  return {
    consumer: String(row.consumer),
    id: String(row.id),
    type: String(row.type),
    topic: String(row.topic),
    key: row.key === null || row.key === undefined ? null : String(row.key),
    attempts: Number(row.attempts),
    reason: String(row.reason),
    firstSeenAt: new Date(row.first_seen_at as Date | string | number),
    deadAt: new Date(row.dead_at as Date | string | number),
  };
}
