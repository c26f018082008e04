import { OutboxerError } from '../../core/errors.js';

/**
 * The codes the HTTP server of operations answers with, in `{ "error": { "code", "message" } }` (docs/http-api.md,
 * "Errors"). Stable: clients and the dashboard may branch on them.
 */
export type OpsHttpErrorCode =
  | 'OUTBOXER_BAD_REQUEST_TARGET'
  | 'OUTBOXER_INVALID_PATH'
  | 'OUTBOXER_INVALID_QUERY'
  | 'OUTBOXER_INVALID_JSON'
  | 'OUTBOXER_INVALID_REQUEST'
  | 'OUTBOXER_INVALID_ID'
  | 'OUTBOXER_UNAUTHORIZED'
  | 'OUTBOXER_ADMIN_DISABLED'
  | 'OUTBOXER_HOST_REFUSED'
  | 'OUTBOXER_NOT_FOUND'
  | 'OUTBOXER_METHOD_NOT_ALLOWED'
  | 'OUTBOXER_BODY_TOO_LARGE'
  | 'OUTBOXER_UNSUPPORTED_MEDIA_TYPE'
  | 'OUTBOXER_NOT_SUPPORTED'
  | 'OUTBOXER_DATABASE_UNAVAILABLE'
  | 'OUTBOXER_BUSY'
  | 'OUTBOXER_STORE_FAILED';

/**
 * A request the server refuses or cannot serve: its HTTP status, stable code, message and extra headers (`Allow`,
 * `WWW-Authenticate`, `Retry-After`). An `OutboxerError` like every outboxer error, its code an `OpsHttpErrorCode`.
 */
export class OpsHttpError extends OutboxerError {
  declare readonly code: OpsHttpErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: OpsHttpErrorCode, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(code, message);
    this.name = 'OpsHttpError';
    this.status = status;
    this.headers = Object.freeze({ ...headers });
  }
}
