import { describeError } from '../../core/errors.js';
import type { Logger, OutboxOperator, OutboxSchema, WakeSignal } from '../../core/ports.js';
import { pgListenWakeSignal } from '../../stores/postgres/wakeup.js';
import { fromPgPool, type PgDatabase } from '../../stores/postgres/database.js';
import { safePoolConfig } from '../../stores/postgres/pool.js';
import { PostgresOutboxStore, type PostgresStoreOptions } from '../../stores/postgres/postgres-store.js';
import { resolveTableName, type TableName } from '../../stores/postgres/sql.js';
import type { CliConfig } from './config.js';
import { CliFailure } from './errors.js';

export interface OpenStore {
  readonly store: PostgresOutboxStore;
  /** Wakes the relay on NOTIFY from writers that use `pgCommitNotifier` (a dedicated connection). */
  readonly wakeSignal: WakeSignal;
  /** The same pool as the store's, for commands that need more than the store port (migrate). */
  readonly database: PgDatabase;
  readonly tableName: TableName;
}

/** `pg` is an optional peer dependency: loaded only by the commands that connect. */
async function loadPg(): Promise<typeof import('pg').default> {
  try {
    return (await import('pg')).default;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND') {
      throw new CliFailure('OUTBOXER_MISSING_DEPENDENCY', "this command needs the 'pg' package: npm install pg");
    }
    throw error;
  }
}

/**
 * A store over a `pg` pool the CLI owns (closing the store ends it), with keepalive and query
 * timeouts (safePoolConfig). An idle client's network error is logged, never left to crash the process.
 */
export async function openStore(
  config: CliConfig,
  logger: Logger,
  options: { readonly max?: number } & Omit<PostgresStoreOptions, 'schema' | 'table'> = {},
): Promise<OpenStore> {
  if (config.databaseUrl === undefined) throw new CliFailure('OUTBOXER_INVALID_OPTION', 'no database URL');
  const pg = await loadPg();
  const pool = new pg.Pool(
    safePoolConfig({
      connectionString: config.databaseUrl,
      max: options.max ?? 2,
      applicationName: `outboxer ${config.command}`,
    }),
  );
  pool.on('error', (error: Error) => {
    // The pool drops the broken client and opens a new one on the next query.
    logger.warn({ error: describeError(error) }, 'idle database connection failed; the pool will reconnect');
  });
  const database = fromPgPool(pool, { ownsPool: true });
  const { max: _max, ...storeOptions } = options;
  const store = new PostgresOutboxStore(database, { ...storeOptions, schema: config.schema, table: config.table });
  const databaseUrl = config.databaseUrl;
  const wakeSignal = pgListenWakeSignal({
    logger,
    connect: async () => {
      const client = new pg.Client(safePoolConfig({ connectionString: databaseUrl, applicationName: `outboxer ${config.command} listen` }));
      client.on('error', () => undefined);
      await client.connect();
      return client;
    },
  });
  return { store, database, wakeSignal, tableName: resolveTableName(config.schema, config.table) };
}

/** What `status` and `dead` use of a store: the operator role, and `close` (the CLI owns the pool). */
export type OperatorStore = OutboxOperator & Pick<OutboxSchema, 'close'>;

/** A store on one connection for the operator commands. */
export async function openOperatorStore(config: CliConfig, logger: Logger): Promise<OperatorStore> {
  return (await openStore(config, logger, { max: 1 })).store;
}
