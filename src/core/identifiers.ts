import { ConfigurationError } from './errors.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The longest outbox (or inbox) table name, in bytes: room for the index names derived from it within 63 bytes. */
export const MAX_TABLE_NAME_BYTES = 40;

/**
 * Validates a configurable SQL identifier (schema, table) against a strict allow-list and
 * returns it unchanged. Anything that looks pre-quoted, or holds spaces, quotes or dots, is refused:
 * quoting happens once, in `quoteIdentifier`, never by the caller.
 */
export function validateIdentifier(value: string, what: string, maxBytes = 63): string {
  if (!IDENTIFIER.test(value) || Buffer.byteLength(value) > maxBytes) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_IDENTIFIER',
      `${what} must match ^[A-Za-z_][A-Za-z0-9_]*$ and be at most ${maxBytes} bytes; got ${JSON.stringify(value.slice(0, 80))}`,
    );
  }
  return value;
}

/** Postgres-style double-quoted identifier: inner quotes doubled, so quoting is injective. */
export function quoteIdentifier(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}
