import type { Logger } from '../../core/ports.js';
import { fromPgPool } from '../../stores/postgres/database.js';
import { migrations, runMigrations } from '../../stores/postgres/migrations.js';
import { safePoolConfig } from '../../stores/postgres/pool.js';
import { PostgresOutboxStore } from '../../stores/postgres/postgres-store.js';
import { resolveTableName } from '../../stores/postgres/sql.js';
import { pgListenWakeSignal } from '../../stores/postgres/wakeup.js';
import type { CliConfig } from './config.js';
import { type CliStore, loadDriver, logIdleFailure, type OpenStore, type StoreOpenOptions } from './database.js';
import type { OpsPool } from './ops-store.js';

/**
 * A PostgreSQL store over a `pg` pool the CLI owns, with keepalive and query timeouts (safePoolConfig), and a
 * LISTEN connection that wakes the relay on writers' NOTIFY (`pgCommitNotifier`).
 */
export async function openPostgresCliStore(config: CliConfig, url: string, logger: Logger, options: StoreOpenOptions): Promise<OpenStore> {
  const pg = (await loadDriver('pg', () => import('pg'))).default;
  const pool = new pg.Pool(safePoolConfig({ connectionString: url, max: options.max ?? 2, applicationName: `outboxer ${config.command}` }));
  pool.on('error', logIdleFailure(logger));
  const database = fromPgPool(pool, { ownsPool: true });
  const store = new PostgresOutboxStore(database, postgresStoreOptions(config, options));
  const tableName = resolveTableName(config.schema, config.table);
  const wakeSignal = pgListenWakeSignal({
    logger,
    connect: async () => {
      const client = new pg.Client(safePoolConfig({ connectionString: url, applicationName: `outboxer ${config.command} listen` }));
      client.on('error', () => undefined);
      await client.connect();
      return client;
    },
  });
  return {
    dialect: 'postgres',
    store,
    wakeSignal,
    label: `${config.schema}.${config.table}`,
    migrations,
    migrate: () => runMigrations(database, tableName),
    postgres: { database, tableName },
  };
}

/**
 * The store of the daemon's HTTP server, on a `pg` pool of its own (`outboxer relay http` in `pg_stat_activity`):
 * `pool.connections` connections whose statements the server ends after `pool.statementTimeoutMs`, and no LISTEN.
 * Closing the store ends the pool.
 */
export async function openPostgresOpsStore(config: CliConfig, url: string, logger: Logger, options: StoreOpenOptions, pool: OpsPool): Promise<CliStore> {
  const pg = (await loadDriver('pg', () => import('pg'))).default;
  const own = new pg.Pool(
    safePoolConfig({
      connectionString: url,
      max: pool.connections,
      queryTimeoutMs: pool.statementTimeoutMs,
      applicationName: `outboxer ${config.command} http`,
    }),
  );
  own.on('error', logIdleFailure(logger));
  return new PostgresOutboxStore(fromPgPool(own, { ownsPool: true }), postgresStoreOptions(config, options));
}

function postgresStoreOptions(config: CliConfig, options: StoreOpenOptions) {
  const { max: _max, partitionCount: _partitionCount, ...storeOptions } = options;
  return { ...storeOptions, schema: config.schema, table: config.table };
}
