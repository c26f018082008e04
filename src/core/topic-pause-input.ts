import { ConfigurationError } from './errors.js';
import { DEFAULT_DESTINATION, destinationFault } from './message-rules.js';

/** The outbox table's own bound on a topic (its CHECK), so every topic a row can have can be paused. */
export const MAX_PAUSED_TOPIC_BYTES = 255;
export const MAX_PAUSE_REASON_BYTES = 500;
/** How many topics may be paused at once: every relay keeps the list in memory and reads it again every few seconds. */
export const MAX_PAUSED_TOPICS = 1000;
/** How many destinations may be paused at once, for the same reason. */
export const MAX_PAUSED_DESTINATIONS = 1000;

// C0 and C1 controls, DEL, and the bidirectional overrides: none belongs in a topic or a reason shown to operators
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const CONTROL_GLOBAL = new RegExp(CONTROL.source, 'g');

/**
 * Checks an operator's pause before any store sees it: a topic as the outbox table accepts it (not empty, at most
 * 255 bytes) with no control characters, and a reason of at most 500 bytes without them. Refusals are
 * `ConfigurationError`s (`OUTBOXER_INVALID_TOPIC`, `OUTBOXER_INVALID_OPTION` for the reason) naming the input.
 */
export function checkTopicPause(topic: unknown, reason: unknown = ''): { readonly topic: string; readonly reason: string } {
  if (typeof topic !== 'string' || topic === '' || Buffer.byteLength(topic) > MAX_PAUSED_TOPIC_BYTES || CONTROL.test(topic)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_TOPIC',
      `a paused topic must be a non-empty string of at most ${MAX_PAUSED_TOPIC_BYTES} bytes without control characters; got ${describe(topic)}`,
      { options: ['topic'] },
    );
  }
  return { topic, reason: checkPauseReason(`topic ${JSON.stringify(topic)}`, reason) };
}

/**
 * Checks an operator's pause of a whole destination before any store sees it: a destination name as the outbox
 * table accepts it (`destinationFault`), `default` for the relay's own publisher (rows without a destination), and
 * a reason as `checkTopicPause` takes it. Refusals are `ConfigurationError`s (`OUTBOXER_INVALID_DESTINATION`,
 * `OUTBOXER_INVALID_OPTION` for the reason) naming the input.
 */
export function checkDestinationPause(destination: unknown, reason: unknown = ''): { readonly destination: string; readonly reason: string } {
  const fault = typeof destination === 'string' ? destinationFault(destination) : `destination must be a string; got ${describe(destination)}`;
  if (fault !== undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_DESTINATION',
      `a paused destination must be a destination's name, or ${JSON.stringify(DEFAULT_DESTINATION)} for the relay's own publisher: ${fault.replace(CONTROL_GLOBAL, '?')}`,
      { options: ['destination'] },
    );
  }
  return { destination: destination as string, reason: checkPauseReason(`destination ${JSON.stringify(destination)}`, reason) };
}

/** The refusal of a destination pause past `MAX_PAUSED_DESTINATIONS`, the same from every store. */
export function tooManyPausedDestinations(destination: string, paused: number): ConfigurationError {
  return new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `cannot pause destination ${JSON.stringify(destination)}: ${paused} destinations are paused already, the most a table allows (${MAX_PAUSED_DESTINATIONS}); resume some first`,
    { options: ['destination'] },
  );
}

/** A pause's reason (of `what`, e.g. `topic "orders"`): at most 500 bytes, no control characters, line breaks included. */
function checkPauseReason(what: string, reason: unknown): string {
  if (typeof reason !== 'string' || Buffer.byteLength(reason) > MAX_PAUSE_REASON_BYTES || CONTROL.test(reason)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `the reason for pausing ${what} must be a string of at most ${MAX_PAUSE_REASON_BYTES} bytes without control characters (line breaks included)`,
      { options: ['reason'] },
    );
  }
  return reason;
}

function describe(value: unknown): string {
  if (typeof value !== 'string') return `a ${value === null ? 'null' : typeof value}`;
  if (value === '') return 'an empty string';
  return `${JSON.stringify(value.slice(0, 60)).replace(CONTROL_GLOBAL, '?')}${value.length > 60 ? '…' : ''} (${Buffer.byteLength(value)} bytes)`;
}
