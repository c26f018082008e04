import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import { OpsHttpError } from './ops-http-error.js';

/** An optional operator method, or 501 `OUTBOXER_NOT_SUPPORTED` naming it when the store lacks it. */
export function supported<T>(method: T | undefined, name: string): T {
  if (method === undefined) {
    throw new OpsHttpError(501, 'OUTBOXER_NOT_SUPPORTED', `this store does not implement ${name}(), which this endpoint needs (the PostgreSQL store does)`);
  }
  return method;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN']);

/**
 * What a client is told when the store (or the metrics registry) throws: 503 `OUTBOXER_DATABASE_UNAVAILABLE`
 * when the database cannot be reached (a network error, SQLSTATE class 08 or 57P, a closed connection); an
 * outboxer error's own code and message (written to carry no payload or password); otherwise 500
 * `OUTBOXER_STORE_FAILED` without the driver's text, which goes to the server's log only.
 */
export function storeFailure(error: unknown): OpsHttpError {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === 'OUTBOXER_DATABASE_UNAVAILABLE' || (typeof code === 'string' && (NETWORK_CODES.has(code) || /^(08|57P)/.test(code)))) {
    return new OpsHttpError(503, 'OUTBOXER_DATABASE_UNAVAILABLE', 'the database cannot be reached now; the server log has the error');
  }
  if (error instanceof Error && /Connection terminated|connection timeout|timeout exceeded when trying to connect/i.test(error.message)) {
    return new OpsHttpError(503, 'OUTBOXER_DATABASE_UNAVAILABLE', 'the database cannot be reached now; the server log has the error');
  }
  if (error instanceof ConfigurationError) return new OpsHttpError(400, 'OUTBOXER_INVALID_REQUEST', `${error.code}: ${error.message}`);
  if (error instanceof OutboxerError) return new OpsHttpError(500, 'OUTBOXER_STORE_FAILED', `${error.code}: ${error.message}`);
  return new OpsHttpError(500, 'OUTBOXER_STORE_FAILED', 'the store failed; the server log has the error');
}
