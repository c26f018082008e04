import { describeError } from '../../core/errors.js';
import type { Logger, OutboxOperator, OutboxSchema, PartitionReader, RelayLeases, RelayStore, WakeSignal } from '../../core/ports.js';
import type { PgDatabase } from '../../stores/postgres/database.js';
import type { TableName } from '../../stores/postgres/sql.js';
import type { CliConfig, StoreSettings } from './config.js';
import { CliFailure } from './errors.js';

/** The databases the CLI speaks to, told apart by the URL's scheme. */
export type Dialect = 'postgres' | 'mysql' | 'sqlite';

/** What every command uses of a store, whatever its database. */
export type CliStore = RelayStore &
  OutboxOperator &
  OutboxSchema & {
    readonly leases: RelayLeases;
    readonly reader: PartitionReader;
    readonly retainPublishedMs: number;
    readonly idempotencyWindowMs: number;
  };

/** One versioned step of a dialect's schema, as `migrate` reports it. */
export interface MigrationInfo {
  readonly version: number;
  readonly description: string;
}

export interface OpenStore {
  readonly dialect: Dialect;
  readonly store: CliStore;
  /** Wakes the relay on a hint from writers in other processes: PostgreSQL's NOTIFY; none elsewhere (the relay polls). */
  readonly wakeSignal: WakeSignal | undefined;
  /** Where the outbox is, for messages: `public.outbox`, `shop.outbox`, `./demo.db outbox`. */
  readonly label: string;
  readonly migrations: readonly MigrationInfo[];
  /** Applies the missing migrations (idempotent, safe side by side); returns the versions applied. */
  migrate(): Promise<readonly number[]>;
  /** PostgreSQL only: the handle and names the engine commands (switch, resize, engine status) need. */
  readonly postgres: { readonly database: PgDatabase; readonly tableName: TableName } | undefined;
}

export type StoreOpenOptions = { readonly max?: number; readonly partitionCount?: number } & Partial<StoreSettings>;

export function dialectOf(url: string): Dialect {
  const protocol = url.slice(0, url.indexOf(':') + 1).toLowerCase();
  if (protocol === 'mysql:' || protocol === 'mariadb:') return 'mysql';
  if (protocol === 'sqlite:') return 'sqlite';
  return 'postgres';
}

/**
 * Where the outbox table is, as the relay's start log says it: PostgreSQL's schema, the database a MariaDB/MySQL
 * URL names (they have no schema apart from it), SQLite's file.
 */
export async function outboxLocation(dialect: Dialect, config: CliConfig): Promise<Readonly<Record<string, string>>> {
  const url = config.databaseUrl ?? '';
  if (dialect === 'postgres') return { schema: config.schema };
  if (dialect === 'mysql') return { databaseName: decodeURIComponent(new URL(url).pathname.slice(1)) || '(default database)' };
  return { file: (await import('./sqlite-store-opener.js')).sqlitePath(url) };
}

/** Loads an optional peer dependency, or says which package to install. */
export async function loadDriver<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND') throw new CliFailure('OUTBOXER_MISSING_DEPENDENCY', `this command needs the '${name}' package: npm install ${name}`);
    throw error;
  }
}

/** Opens the store of the configured URL; closing the store ends every connection the CLI opened for it. */
export async function openStore(config: CliConfig, logger: Logger, options: StoreOpenOptions = {}): Promise<OpenStore> {
  if (config.databaseUrl === undefined) throw new CliFailure('OUTBOXER_INVALID_OPTION', 'no database URL');
  const dialect = dialectOf(config.databaseUrl);
  if (dialect === 'mysql') return (await import('./mysql-store-opener.js')).openMysqlCliStore(config, config.databaseUrl, logger, options);
  if (dialect === 'sqlite') return (await import('./sqlite-store-opener.js')).openSqliteCliStore(config, config.databaseUrl, options);
  const { openPostgresCliStore } = await import('./postgres-store-opener.js');
  return openPostgresCliStore(config, config.databaseUrl, logger, options);
}

/** What `status` and `dead` use of a store: the operator role, and `close` (the CLI owns the connections). */
export type OperatorStore = OutboxOperator & Pick<OutboxSchema, 'close'>;

/** A store on one connection for the operator commands. */
export async function openOperatorStore(config: CliConfig, logger: Logger): Promise<OperatorStore> {
  return (await openStore(config, logger, { max: 1 })).store;
}

/** An idle pooled connection's failure, logged, never left to crash the process. */
export function logIdleFailure(logger: Logger): (error: Error) => void {
  return (error) => logger.warn({ error: describeError(error) }, 'idle database connection failed; the pool will reconnect');
}

/** The store settings the flags set, without the ones left to the store's defaults. */
export function storeOptions(options: StoreOpenOptions): { retainPublishedMs?: number; idempotencyWindowMs?: number } {
  return {
    ...(options.retainPublishedMs === undefined ? {} : { retainPublishedMs: options.retainPublishedMs }),
    ...(options.idempotencyWindowMs === undefined ? {} : { idempotencyWindowMs: options.idempotencyWindowMs }),
  };
}
