import { ConfigurationError } from './errors.js';
import { isUuid } from './ids.js';
import { DEFAULT_DESTINATION, destinationFault } from './message-rules.js';
import type { PendingQuery } from './ports/pending-messages.js';

/** The most pending messages one list returns (as `outboxer dead list --limit`). */
export const MAX_PENDING_LIST_LIMIT = 100_000;
/** The oldest age a filter takes: ten years, in seconds. */
export const MAX_OLDER_THAN_SECONDS = 10 * 365 * 24 * 3600;
/** The outbox table's own bounds on a topic and on a key (its CHECK, and the writer's). */
const MAX_TOPIC_BYTES = 255;
const MAX_KEY_BYTES = 512;

// C0 and C1 controls, DEL and the bidirectional overrides, as for topic pauses: never in a filter an operator types
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const CONTROL_GLOBAL = new RegExp(CONTROL.source, 'g');

/**
 * Checks a list of pending messages before any store sees it: a whole `limit` from 1 to 100,000, a topic and a key
 * as the table accepts them (not empty, at most 255 and 512 bytes, no control characters), a whole number of
 * seconds. Returns the query with only the filters given. Refusals are `ConfigurationError`s naming the input.
 */
export function checkPendingQuery(query: PendingQuery): PendingQuery {
  const { limit, topic, key, olderThanSeconds } = query;
  const destination = checkDestinationFilter(query.destination);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PENDING_LIST_LIMIT) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `the limit of a pending list must be a whole number from 1 to ${MAX_PENDING_LIST_LIMIT}; got ${String(limit)}`,
      { options: ['limit'] },
    );
  }
  if (topic !== undefined && !isText(topic, MAX_TOPIC_BYTES)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_TOPIC',
      `a topic filter must be a non-empty string of at most ${MAX_TOPIC_BYTES} bytes without control characters`,
      { options: ['topic'] },
    );
  }
  if (key !== undefined && !isText(key, MAX_KEY_BYTES)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_KEY',
      `a key filter must be a non-empty string of at most ${MAX_KEY_BYTES} bytes without control characters`,
      { options: ['key'] },
    );
  }
  if (olderThanSeconds !== undefined && (!Number.isSafeInteger(olderThanSeconds) || olderThanSeconds < 0 || olderThanSeconds > MAX_OLDER_THAN_SECONDS)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `olderThanSeconds must be a whole number from 0 to ${MAX_OLDER_THAN_SECONDS}; got ${String(olderThanSeconds)}`,
      { options: ['olderThanSeconds'] },
    );
  }
  return Object.freeze({
    limit,
    ...(topic === undefined ? {} : { topic }),
    ...(key === undefined ? {} : { key }),
    ...(olderThanSeconds === undefined ? {} : { olderThanSeconds }),
    ...(destination === undefined ? {} : { destination }),
  });
}

/**
 * A destination filter as stores compare it: undefined (no filter), null for rows without a destination (also
 * spelled `default`, as the CLI and the API take it), or a destination's name. Refused with
 * `OUTBOXER_INVALID_DESTINATION` otherwise.
 */
export function checkDestinationFilter(destination: unknown): string | null | undefined {
  if (destination === undefined || destination === null || destination === DEFAULT_DESTINATION) return destination === undefined ? undefined : null;
  const fault = typeof destination === 'string' ? destinationFault(destination) : `a destination filter is a string; got a ${typeof destination}`;
  if (fault !== undefined) throw new ConfigurationError('OUTBOXER_INVALID_DESTINATION', fault, { options: ['destination'] });
  return destination as string;
}

/** A message id as stores compare it: a UUID, lower-cased. Refused with `OUTBOXER_INVALID_ID` otherwise. */
export function checkMessageId(id: unknown): string {
  if (typeof id !== 'string' || !isUuid(id)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_ID',
      `a message id is a UUID; got ${typeof id === 'string' ? JSON.stringify(id.slice(0, 40).replace(CONTROL_GLOBAL, '?')) : `a ${typeof id}`}`,
      { options: ['id'] },
    );
  }
  return id.toLowerCase();
}

/** Message ids lower-cased, duplicates dropped, every one checked (`checkMessageId`). */
export function checkMessageIds(ids: readonly unknown[]): readonly string[] {
  if (!Array.isArray(ids)) throw new ConfigurationError('OUTBOXER_INVALID_ID', 'message ids must be given as an array of UUIDs', { options: ['ids'] });
  return Object.freeze([...new Set(ids.map(checkMessageId))]);
}

function isText(value: unknown, maxBytes: number): value is string {
  return typeof value === 'string' && value !== '' && Buffer.byteLength(value) <= maxBytes && !CONTROL.test(value);
}
