import type { OutboxOperator } from '../../../core/ports/outbox-operator.js';
import { MAX_TOPIC_LAG_LIMIT } from '../../../core/ports/outbox-operator.js';
import { shownDestination } from '../../destination-filter.js';
import { printable, renderTable } from '../format.js';

/** A topic and a reason are bounded by the store (255 and 500 bytes), a relay's error by 1000: shown whole. */
const SHOWN_MAX_LENGTH = 1100;
/** The destination column of an operator's pause: it holds the topic for every destination (no name has parentheses). */
const EVERY_DESTINATION = '(all)';

/**
 * A paused topic as `topics list` and `status` show it: paused by an operator (the table's list of paused
 * topics, until `topics resume`), or held by the relays because its destination is missing (what its held rows
 * record; each relay probes it with backoff and publishes again by itself once the destination exists).
 */
export interface ListedPause {
  readonly topic: string;
  readonly pausedBy: 'operator' | 'relay';
  /** The operator's reason (may be empty), or the publisher's error that found the destination missing. */
  readonly reason: string;
  /** When the operator paused it, or when a relay found the destination missing (the earliest episode recorded). */
  readonly pausedAt: Date;
  /** Relay pauses only: pending messages held for it. */
  readonly held?: number;
  /**
   * Relay pauses only: the destination whose rows are held (null: the relay's own publisher, `default`); a topic
   * fanned out is held per destination. Absent on an operator's pause, which holds every destination's rows.
   */
  readonly destination?: string | null;
}

/** What a listing of paused topics found; `relayListComplete` is false when more topics may be held than were read. */
export interface PauseListing {
  readonly pauses: readonly ListedPause[];
  readonly relayListComplete: boolean;
}

/**
 * The operators' pauses (oldest first), then the topics relays hold for a missing destination (earliest first).
 * The second part reads every pending row (`topicLag`, which lists held topics first): for an operator's command.
 * `withOperator: false` reads only the relays' part (a table without the list of operator pauses).
 */
export async function readPauses(store: Pick<OutboxOperator, 'pausedTopics' | 'topicLag'>, withOperator = true): Promise<PauseListing> {
  const operator = withOperator ? await store.pausedTopics() : [];
  const lag = await store.topicLag(MAX_TOPIC_LAG_LIMIT);
  const relay: ListedPause[] = [];
  for (const topic of lag) {
    const pause = topic.relayPause;
    if (pause === undefined || pause === null) continue;
    relay.push({
      topic: topic.topic,
      pausedBy: 'relay',
      reason: pause.reason,
      pausedAt: pause.since,
      held: pause.held,
      destination: topic.destination ?? null,
    });
  }
  const byName = (a: ListedPause, b: ListedPause) =>
    (a.topic === b.topic ? shownDestination(a.destination) < shownDestination(b.destination) : a.topic < b.topic) ? -1 : 1;
  relay.sort((a, b) => a.pausedAt.getTime() - b.pausedAt.getTime() || byName(a, b));
  return {
    pauses: [...operator.map((pause): ListedPause => ({ topic: pause.topic, pausedBy: 'operator', reason: pause.reason, pausedAt: pause.pausedAt })), ...relay],
    relayListComplete: !(lag.length === MAX_TOPIC_LAG_LIMIT && relay.length === lag.length),
  };
}

/** The `--json` form: `pausedAt` as ISO text, `destination` (null: `default`) and `held` on relay pauses only. */
export function pausesJson(pauses: readonly ListedPause[]): Record<string, unknown>[] {
  return pauses.map((pause) => ({
    topic: pause.topic,
    ...(pause.pausedBy === 'relay' ? { destination: pause.destination ?? null } : {}),
    pausedBy: pause.pausedBy,
    reason: pause.reason,
    pausedAt: pause.pausedAt.toISOString(),
    ...(pause.held === undefined ? {} : { held: pause.held }),
  }));
}

/** The table of paused topics, and one line per kind saying what holds them and what ends it. */
export function pausesText(listing: PauseListing, table: string): string {
  const { pauses } = listing;
  const rows = pauses.map((pause) => [
    printable(pause.topic, SHOWN_MAX_LENGTH),
    pause.pausedBy === 'relay' ? shownDestination(pause.destination) : EVERY_DESTINATION,
    pause.pausedBy,
    pause.pausedAt.toISOString(),
    pause.pausedBy === 'relay'
      ? `destination missing: ${printable(pause.reason, SHOWN_MAX_LENGTH)} (${pause.held ?? 0} message(s) held)`
      : pause.reason === ''
        ? '-'
        : printable(pause.reason, SHOWN_MAX_LENGTH),
  ]);
  let text = renderTable(['topic', 'destination', 'paused by', 'paused at', 'reason'], rows);
  const byOperator = pauses.filter((pause) => pause.pausedBy === 'operator').length;
  const byRelay = pauses.length - byOperator;
  if (byOperator > 0)
    text += `${byOperator} topic(s) paused by an operator: every relay of ${table} holds their messages until 'outboxer topics resume <topic>'\n`;
  if (byRelay > 0) {
    const more = listing.relayListComplete ? '' : ` (the first ${byRelay} read; more may be held)`;
    text +=
      `${byRelay} topic(s) held by the relays${more}: their destination is missing (no queue bound, no exchange or stream); ` +
      'each relay probes it with backoff and publishes by itself once it exists\n';
  }
  return text;
}

/** A store's "no such table" on any dialect: PostgreSQL 42P01, MariaDB/MySQL ER_NO_SUCH_TABLE, SQLite's message. */
export function isMissingTable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '42P01' || code === 'ER_NO_SUCH_TABLE' || (error instanceof Error && /no such table/i.test(error.message));
}
