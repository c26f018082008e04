/**
 * The rules every stored message keeps, in one place and one wording: the library checks them at enqueue
 * (validate-message.ts), the table at INSERT on every database (each store's table-contract migration, built
 * from the patterns and words below), and the publishers once more for rows stored before the table checked
 * them (stored-message-check.ts). A refusal reads `<what> "<value>" is invalid: <rule>` everywhere (values that
 * are data, keys and header values, are never quoted; SQLite's refusals quote nothing); the library starts it
 * with `message <id>: `, the table with `outbox ` (docs/table.md).
 */

/** Dot-separated non-empty parts. Written without backslashes so that the same text is a pattern in JS, PostgreSQL and MariaDB. */
export const TOPIC_PATTERN = '^[A-Za-z0-9_:/-]+(?:[.][A-Za-z0-9_:/-]+)*$';
/** A destination's name: also a metrics label value and a CLI argument, so plain ASCII. */
export const DESTINATION_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]*$';
export const HEADER_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]*$';
/** W3C Trace Context §3.2: lowercase hex, version ff forbidden, all-zero trace and parent ids invalid. */
export const TRACEPARENT_PATTERN = '^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$';

export const MAX_TOPIC_BYTES = 255;
export const MAX_TYPE_BYTES = 255;
export const MAX_KEY_BYTES = 512;
export const MAX_HEADERS = 64;
export const MAX_DESTINATION_BYTES = 64;
/** The name of the relay's own publisher: a row of this destination is stored with none (NULL). */
export const DEFAULT_DESTINATION = 'default';
export const MAX_HEADER_NAME_BYTES = 128;
export const MAX_HEADER_VALUE_BYTES = 4096;
/** How much of a refused value a message quotes (as JSON text: control characters show as escapes). */
export const QUOTED_CHARACTERS = 80;

/** The rule each refusal states after its colon, word for word the same in the library and in the table. */
export const MessageRules = Object.freeze({
  topic: `a topic is dot-separated non-empty parts of ASCII letters, digits and _ : / - (no spaces or wildcards), at most ${MAX_TOPIC_BYTES} bytes`,
  type: `a type is a non-empty string of at most ${MAX_TYPE_BYTES} bytes without control characters`,
  key: `a key is a non-empty string of at most ${MAX_KEY_BYTES} bytes without control characters, or none`,
  id: 'an id is a UUID in lowercase hex (8-4-4-4-12 digits)',
  destination: `a destination is an ASCII letter or digit, then letters, digits, _ or -, at most ${MAX_DESTINATION_BYTES} bytes`,
  headerCount: `at most ${MAX_HEADERS} headers are allowed`,
  headerName: `a header name is an ASCII letter or digit, then letters, digits, _ . or -, at most ${MAX_HEADER_NAME_BYTES} bytes`,
  headerValue: `a header value is at most ${MAX_HEADER_VALUE_BYTES} bytes with no CR, LF or NUL`,
  traceparent: 'a traceparent is a W3C trace context, <2 hex>-<32 hex>-<16 hex>-<2 hex> in lowercase (version not ff, ids not all zero)',
});

const TOPIC = new RegExp(TOPIC_PATTERN);
const DESTINATION = new RegExp(DESTINATION_PATTERN);
const HEADER_NAME = new RegExp(HEADER_NAME_PATTERN);
const TRACEPARENT = new RegExp(TRACEPARENT_PATTERN);
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const LINE_BREAK_OR_NUL = /[\r\n\0]/;

/** A refused value as the messages quote it: JSON text, cut to its first characters. */
export function quoted(value: string): string {
  return JSON.stringify(value.slice(0, QUOTED_CHARACTERS));
}

/** `what "value" is invalid: rule`. */
function invalid(what: string, value: string, rule: string): string {
  return `${what} ${quoted(value)} is invalid: ${rule}`;
}

/** Non-empty, at most `maxBytes` of UTF-8, no control character. */
function isPlainText(value: string, maxBytes: number): boolean {
  return value !== '' && Buffer.byteLength(value) <= maxBytes && !CONTROL_CHARACTER.test(value);
}

/** What is wrong with a topic, or undefined. */
export function topicFault(topic: string): string | undefined {
  if (TOPIC.test(topic) && Buffer.byteLength(topic) <= MAX_TOPIC_BYTES) return undefined;
  return invalid('topic', topic, MessageRules.topic);
}

export function typeFault(type: string): string | undefined {
  return isPlainText(type, MAX_TYPE_BYTES) ? undefined : invalid('type', type, MessageRules.type);
}

/** A key (null: none) that breaks the rule, or undefined. Keys are data (a customer id, an email): never quoted. */
export function keyFault(key: string | null): string | undefined {
  return key === null || isPlainText(key, MAX_KEY_BYTES) ? undefined : `key is invalid: ${MessageRules.key}`;
}

/** What is wrong with a destination's name, or undefined. */
export function destinationFault(destination: string): string | undefined {
  if (DESTINATION.test(destination) && Buffer.byteLength(destination) <= MAX_DESTINATION_BYTES) return undefined;
  return invalid('destination', destination, MessageRules.destination);
}

/** The kind of a header value that is not a string, in the table's words (`a JSON number`). */
function kindOf(value: unknown): string {
  if (value === null) return 'a JSON null';
  if (Array.isArray(value)) return 'a JSON array';
  if (['object', 'string', 'number', 'boolean'].includes(typeof value)) return `a JSON ${typeof value}`;
  return `a JavaScript ${typeof value}`;
}

/** What is wrong with the first header that breaks a rule (names in their order), or undefined. */
export function headersFault(headers: unknown): string | undefined {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return `headers must be a JSON object of string values; got ${kindOf(headers)}`;
  }
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) return `headers are invalid (${entries.length}): ${MessageRules.headerCount}`;
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name) || Buffer.byteLength(name) > MAX_HEADER_NAME_BYTES) return invalid('header name', name, MessageRules.headerName);
    if (typeof value !== 'string') return `header ${quoted(name)} must be a string; got ${kindOf(value)}`;
    if (LINE_BREAK_OR_NUL.test(value) || Buffer.byteLength(value) > MAX_HEADER_VALUE_BYTES)
      return `header ${quoted(name)} is invalid: ${MessageRules.headerValue}`;
    if (name === 'traceparent' && !TRACEPARENT.test(value)) return `header "traceparent" is invalid: ${MessageRules.traceparent}`;
  }
  return undefined;
}
