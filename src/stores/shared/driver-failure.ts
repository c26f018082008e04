import { OutboxerError } from '../../core/errors.js';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * An error of a database driver or of the network under it: PostgreSQL's SQLSTATE (five characters), mysql2's
 * `ER_...` codes, a socket's code, or a connection the server ended. Not an outboxer error.
 */
export function isDriverFailure(error: unknown): boolean {
  if (!(error instanceof Error) || error instanceof OutboxerError) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (/^[0-9A-Z]{5}$/.test(code) || code.startsWith('ER_') || NETWORK_CODES.has(code))) return true;
  return /from backend|Connection terminated/i.test(error.message);
}
