import { OutboxerError } from '../../core/errors.js';
import type { TableName } from './sql.js';

/** SQLSTATE codes that name a misconfiguration (PostgreSQL appendix A). */
const AUTH_FAILED = new Set(['28P01', '28000']);
const DATABASE_MISSING = '3D000';
const TABLE_MISSING = new Set(['42P01', '3F000']);
/** What node-postgres says when the server does not speak its protocol (a MariaDB or MySQL port, typically). */
const FOREIGN_PROTOCOL = /unexpected \w+ message from backend/i;

/** The SQLSTATE of a statement that gave up waiting for a lock under `lock_timeout` (or `NOWAIT`). */
export const LOCK_NOT_AVAILABLE = '55P03';

/** The SQLSTATE a driver put on an error, if any. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') return error.errors.map(messageOf).join('; ');
  return error instanceof Error ? error.message : String(error);
}

/**
 * A failure of the database start check, with a stable code and the fix. Driver messages carry no password
 * (node-postgres never echoes it); the server's own text is kept, shortened.
 */
export function databaseCheckError(error: unknown, name: TableName): OutboxerError {
  if (error instanceof OutboxerError) return error;
  const code = codeOf(error);
  const detail = messageOf(error).replace(/\s+/g, ' ').slice(0, 300);
  if (code !== undefined && AUTH_FAILED.has(code)) {
    return new OutboxerError(
      'OUTBOXER_AUTH_FAILED',
      `PostgreSQL refused the connection (${code}: ${detail}): check the user and password of the database URL, and pg_hba.conf`,
    );
  }
  if (code === DATABASE_MISSING) {
    return new OutboxerError('OUTBOXER_DATABASE_NOT_FOUND', `the database of the URL does not exist (${detail}): check its name, or create it`);
  }
  if (code !== undefined && TABLE_MISSING.has(code)) return notMigrated(name, 'the table does not exist');
  if (FOREIGN_PROTOCOL.test(detail)) {
    return new OutboxerError(
      'OUTBOXER_WRONG_PROTOCOL',
      `the server at the database URL does not speak the PostgreSQL protocol (${detail}): is it a MariaDB or MySQL port (3306)? outboxer needs PostgreSQL (usually port 5432)`,
    );
  }
  return new OutboxerError('OUTBOXER_DATABASE_UNAVAILABLE', `cannot reach PostgreSQL (${code === undefined ? '' : `${code}: `}${detail})`, { cause: error });
}

export function notMigrated(name: TableName, what: string): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_MIGRATED',
    `outbox table "${name.schema}"."${name.table}" is not migrated (${what}): run 'outboxer migrate' with the same schema and table (or store.migrate(), or apply 'outboxer sql')`,
  );
}
