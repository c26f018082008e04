import { connect } from 'node:net';
import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import type { MysqlExecutor } from './database.js';
import type { MysqlTableNames } from './table-names.js';

/** mysql2's codes for what names a misconfiguration (MariaDB and MySQL share them). */
const AUTH_FAILED = new Set(['ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR', 'ER_NOT_SUPPORTED_AUTH_MODE']);
const DATABASE_MISSING = 'ER_BAD_DB_ERROR';
const TABLE_MISSING = 'ER_NO_SUCH_TABLE';
const PRIVILEGE_MISSING = new Set(['ER_SPECIFIC_ACCESS_DENIED_ERROR', 'ER_TABLEACCESS_DENIED_ERROR']);
/** What mysql2 says when the server's first bytes are no MySQL handshake (a PostgreSQL server that answered, an HTTP port). */
const FOREIGN_PROTOCOL = /malformed communication packet|packets out of order|unsupported protocol|handshake/i;

/** Where the server is, when the database handle knows it: lets `verify` tell a silent foreign server from an outage. */
export interface MysqlServerAddress {
  readonly host: string;
  readonly port: number;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') return error.errors.map(messageOf).join('; ');
  return error instanceof Error ? error.message : String(error);
}

/**
 * A failure of the database start check, with a stable code and the fix. mysql2 never echoes a password; the
 * server's own text is kept, shortened. `silentServer` says a probe found a server that connects but never sends
 * a MySQL handshake: PostgreSQL waits for the client to speak first, so to mysql2 it looks like a timeout.
 */
export function mysqlCheckError(error: unknown, names: MysqlTableNames, silentServer = false): OutboxerError {
  if (error instanceof OutboxerError) return error;
  const code = codeOf(error);
  const detail = messageOf(error).replace(/\s+/g, ' ').slice(0, 300);
  if (code !== undefined && AUTH_FAILED.has(code)) {
    return new OutboxerError(
      'OUTBOXER_AUTH_FAILED',
      `MariaDB/MySQL refused the connection (${code}: ${detail}): check the user and password of the database URL, and the user's grants`,
    );
  }
  if (code === DATABASE_MISSING) {
    return new OutboxerError('OUTBOXER_DATABASE_NOT_FOUND', `the database of the URL does not exist (${detail}): check its name, or create it`);
  }
  if (code === TABLE_MISSING) return mysqlNotMigrated(names, 'the table does not exist');
  if (silentServer || FOREIGN_PROTOCOL.test(detail)) {
    return new OutboxerError(
      'OUTBOXER_WRONG_PROTOCOL',
      `the server at the database URL does not speak the MariaDB/MySQL protocol (${detail}${silentServer ? '; it accepted the connection but sent no handshake' : ''}): is it a PostgreSQL port (5432)? A mysql:// URL needs MariaDB or MySQL (usually port 3306)`,
    );
  }
  return new OutboxerError('OUTBOXER_DATABASE_UNAVAILABLE', `cannot reach MariaDB/MySQL (${code === undefined ? '' : `${code}: `}${detail})`, { cause: error });
}

export function mysqlNotMigrated(names: MysqlTableNames, what: string): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_MIGRATED',
    `outbox table ${names.outbox} is not migrated (${what}): run 'outboxer migrate' with the same database and table (or store.migrate(), or apply 'outboxer sql')`,
  );
}

/** Whether an error is a timeout of the connection itself, the one failure a silent foreign server also causes. */
export function isConnectTimeout(error: unknown): boolean {
  return codeOf(error) === 'ETIMEDOUT';
}

/**
 * The reader's late-commit horizon reads `information_schema.INNODB_TRX`, which needs the PROCESS privilege (a
 * user without it gets an error, or on some versions an empty table, and a read would never settle its rechecks).
 * Confirms it can, or names the grant to run.
 */
export async function checkProcessPrivilege(executor: MysqlExecutor): Promise<void> {
  try {
    await executor.query('SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX');
  } catch (error) {
    const code = codeOf(error);
    if (code === undefined || !PRIVILEGE_MISSING.has(code)) throw error;
    throw processMissing(await currentUser(executor).catch(() => 'the relay user'));
  }
}

async function currentUser(executor: MysqlExecutor): Promise<string> {
  const { rows } = await executor.query('SELECT CURRENT_USER() AS user');
  const user = String(rows[0]?.user ?? '');
  const at = user.lastIndexOf('@');
  return at < 0 ? `'${user}'` : `'${user.slice(0, at)}'@'${user.slice(at + 1)}'`;
}

function processMissing(user: string): ConfigurationError {
  return new ConfigurationError(
    'OUTBOXER_PERMISSION_DENIED',
    `the database user ${user} lacks the PROCESS privilege: relays read information_schema.INNODB_TRX to tell when a late commit can no longer land below a read. Run: GRANT PROCESS ON *.* TO ${user}`,
  );
}

/**
 * Opens a TCP connection and waits up to `timeoutMs` for the server's first bytes: a MySQL server speaks first
 * (a handshake, or an error packet), PostgreSQL and many other servers wait for the client. Returns whether the
 * server accepted the connection and stayed silent; false when it spoke, or could not be reached at all.
 */
export function isSilentServer(address: MysqlServerAddress, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address.host, port: address.port });
    let connected = false;
    const finish = (silent: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(silent);
    };
    const timer = setTimeout(() => finish(connected), timeoutMs);
    socket.once('connect', () => (connected = true));
    socket.once('data', () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('close', () => finish(false));
  });
}
