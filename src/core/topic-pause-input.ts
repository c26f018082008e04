import { ConfigurationError } from './errors.js';

/** The outbox table's own bound on a topic (its CHECK), so every topic a row can have can be paused. */
export const MAX_PAUSED_TOPIC_BYTES = 255;
export const MAX_PAUSE_REASON_BYTES = 500;
/** How many topics may be paused at once: every relay keeps the list in memory and reads it again every few seconds. */
export const MAX_PAUSED_TOPICS = 1000;

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
  if (typeof reason !== 'string' || Buffer.byteLength(reason) > MAX_PAUSE_REASON_BYTES || CONTROL.test(reason)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `the reason for pausing topic ${JSON.stringify(topic)} must be a string of at most ${MAX_PAUSE_REASON_BYTES} bytes without control characters (line breaks included)`,
      { options: ['reason'] },
    );
  }
  return { topic, reason };
}

function describe(value: unknown): string {
  if (typeof value !== 'string') return `a ${value === null ? 'null' : typeof value}`;
  if (value === '') return 'an empty string';
  return `${JSON.stringify(value.slice(0, 60)).replace(CONTROL_GLOBAL, '?')}${value.length > 60 ? '…' : ''} (${Buffer.byteLength(value)} bytes)`;
}
