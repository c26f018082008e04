import type { SqlDialect, SqlQueryOptions, SqlRows, TransactionStatus } from '../../core/ports/outbox-transaction.js';
import { isConnectionLost, mysqlExecutor, type MysqlQueryOptions } from '../../stores/mysql/database.js';
import { pgClientStatus, type PgClientLike } from '../../stores/postgres/pg-client.js';

/** The Sequelize dialects the adapter speaks, and the outboxer dialect of each. */
export const DIALECT_OF_SEQUELIZE: Readonly<Record<string, SqlDialect>> = { postgres: 'postgres', mysql: 'mysql', mariadb: 'mysql' };

/** One statement on the driver connection a Sequelize transaction holds, and what the driver knows of its transaction. */
export interface ConnectionRunner {
  /** Hands the statement to the driver before it returns (no await first), so a check made just before it still holds. */
  run(sql: string, params: readonly unknown[], options?: SqlQueryOptions): Promise<SqlRows>;
  /** The driver's own word on the transaction: `undefined` when it keeps none the adapter can trust. */
  transactionStatus(): TransactionStatus | undefined;
  /** Whether `error`, thrown by a statement of `run`, means the database ended the whole transaction. */
  endedTransaction(error: unknown): boolean;
}

/** mysql2's callback `Connection` (Sequelize's `mysql` dialect). */
interface Mysql2CallbackConnection {
  query(options: MysqlQueryOptions, callback: (error: Error | null, result?: unknown, fields?: unknown) => void): unknown;
}

/** The MariaDB connector's promise `Connection` (Sequelize's `mariadb` dialect); `info.status` holds the server status flags. */
interface MariadbConnection {
  query(options: MariadbQueryOptions, values: unknown[]): Promise<unknown>;
  readonly info?: { readonly status?: number | null };
}

/** Per-statement options that override whatever Sequelize set on the connection (its typeCast, for one). */
interface MariadbQueryOptions {
  readonly sql: string;
  readonly typeCast: undefined;
  readonly rowsAsArray: false;
  readonly nestTables: false;
  readonly metaAsArray: false;
  readonly namedPlaceholders: false;
}

/** SERVER_STATUS_IN_TRANS of the MySQL protocol's server status flags. */
const SERVER_STATUS_IN_TRANS = 1;
/** ER_LOCK_DEADLOCK: InnoDB rolled the whole transaction back. */
const ER_LOCK_DEADLOCK = 1213;

/** The runner of a Sequelize dialect's connection, or `undefined` when the connection is not the driver's expected one. */
export function connectionRunner(sequelizeDialect: string, connection: object): ConnectionRunner | undefined {
  switch (sequelizeDialect) {
    case 'postgres':
      return typeof (connection as Partial<PgClientLike>).query === 'function' ? pgRunner(connection as PgClientLike) : undefined;
    case 'mysql':
      return typeof (connection as Partial<Mysql2CallbackConnection>).query === 'function' ? mysql2Runner(connection as Mysql2CallbackConnection) : undefined;
    case 'mariadb':
      return typeof (connection as Partial<MariadbConnection>).query === 'function' ? mariadbRunner(connection as MariadbConnection) : undefined;
    default:
      return undefined;
  }
}

/** node-postgres: PostgreSQL's own `$n` and arrays; the protocol's transaction status with every ReadyForQuery. */
function pgRunner(client: PgClientLike): ConnectionRunner {
  return {
    async run(text, params, options) {
      const values = [...params];
      const result = await client.query(options?.name === undefined ? { text, values } : { name: options.name, text, values });
      return { rows: result.rows as Record<string, unknown>[], affectedRows: result.rowCount ?? 0 };
    },
    transactionStatus: () => pgClientStatus(client),
    // PostgreSQL keeps the transaction (aborted, waiting for ROLLBACK) and the protocol says so: 'failed'
    endedTransaction: () => false,
  };
}

/** mysql2 keeps no server status between statements: the store asks the server (`SELECT @@in_transaction`). */
function mysql2Runner(connection: Mysql2CallbackConnection): ConnectionRunner {
  const executor = mysqlExecutor({
    query: (options) =>
      new Promise((resolve, reject) => {
        connection.query(options as MysqlQueryOptions, (error, result, fields) => (error === null ? resolve([result, fields]) : reject(error)));
      }),
  });
  return {
    run: (sql, params) => executor.query(sql, params.map(asBuffer)),
    transactionStatus: () => undefined,
    endedTransaction: endsMysqlTransaction,
  };
}

/**
 * The MariaDB connector updates `info.status` from each OK and EOF packet, but not from an error (a deadlock ends the
 * transaction with an error packet): a clear IN_TRANS flag proves the transaction closed, a set one proves nothing.
 */
function mariadbRunner(connection: MariadbConnection): ConnectionRunner {
  return {
    async run(sql, params) {
      const options: MariadbQueryOptions = { sql, typeCast: undefined, rowsAsArray: false, nestTables: false, metaAsArray: false, namedPlaceholders: false };
      const result = await connection.query(options, params.map(asBuffer));
      if (Array.isArray(result)) return { rows: [...(result as Record<string, unknown>[])], affectedRows: 0 };
      return { rows: [], affectedRows: Number((result as { affectedRows?: unknown } | null)?.affectedRows ?? 0) };
    },
    transactionStatus() {
      const status = connection.info?.status;
      return typeof status === 'number' && (status & SERVER_STATUS_IN_TRANS) === 0 ? 'closed' : undefined;
    },
    endedTransaction: endsMysqlTransaction,
  };
}

function endsMysqlTransaction(error: unknown): boolean {
  return (error as { errno?: unknown } | null)?.errno === ER_LOCK_DEADLOCK || isConnectionLost(error);
}

/** mysql2 would write a Uint8Array that is not a Buffer as a list of `key = value` pairs. */
function asBuffer(value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
}
