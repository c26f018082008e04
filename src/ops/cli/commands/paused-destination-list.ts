import type { DestinationPause, OutboxOperator } from '../../../core/ports/outbox-operator.js';
import { printable, renderTable } from '../format.js';
import { isMissingTable } from './paused-topic-list.js';

/** A reason is bounded by the store (500 bytes): shown whole. */
const SHOWN_MAX_LENGTH = 600;
/** The topic column of a destination's pause: it holds every topic of the destination (no topic has parentheses). */
export const EVERY_TOPIC = '(all topics)';

/**
 * The destinations operators paused, oldest first; none from a table without the list (not migrated that far:
 * PostgreSQL 13, MariaDB/MySQL and SQLite 5), so `status` still shows the rest.
 */
export async function readDestinationPauses(store: Pick<OutboxOperator, 'pausedDestinations'>): Promise<DestinationPause[]> {
  try {
    return await store.pausedDestinations();
  } catch (error) {
    if (isMissingTable(error)) return [];
    throw error;
  }
}

/** The `--json` form: `pausedAt` as ISO text. */
export function destinationPausesJson(pauses: readonly DestinationPause[]): Record<string, unknown>[] {
  return pauses.map((pause) => ({ destination: pause.destination, reason: pause.reason, pausedAt: pause.pausedAt.toISOString() }));
}

/** The table of paused destinations, and one line saying what holds them and what ends it. */
export function destinationPausesText(pauses: readonly DestinationPause[], table: string): string {
  const rows = pauses.map((pause) => [
    pause.destination,
    EVERY_TOPIC,
    pause.pausedAt.toISOString(),
    pause.reason === '' ? '-' : printable(pause.reason, SHOWN_MAX_LENGTH),
  ]);
  return (
    `${renderTable(['destination', 'topic', 'paused at', 'reason'], rows)}${pauses.length} destination(s) paused by an operator: every relay of ${table} ` +
    "holds their messages, every topic, until 'outboxer destinations resume <name>'\n"
  );
}
