import type { OpenedStore, StoreConnectionSettings, StoreDialect, StoreTarget, StoreTuning } from '../../core/ports/store-dialect.js';
import { isDriverFailure } from '../shared/driver-failure.js';
import { loadDriver, logIdleFailure } from '../shared/load-driver.js';
import { databaseCheckError } from './connection-errors.js';
import { storeTuning } from '../shared/store-tuning.js';
import { fromPgPool } from './database.js';
import { postgresPartitionEngine } from './engine/postgres-partition-engine.js';
import { migrations, migrationScript, runMigrations } from './migrations.js';
import { safePoolConfig } from './pool.js';
import { PostgresOutboxStore } from './postgres-store.js';
import { resolveTableName } from './sql.js';
import { pgListenWakeSignal } from './wakeup.js';

/**
 * PostgreSQL: a store over a `pg` pool of its own, with keepalive and query timeouts (safePoolConfig), and a
 * LISTEN connection that wakes the relay on writers' NOTIFY (`pgCommitNotifier`). The partition count of a new
 * table is 64; `migrate --partitions` resizes it afterwards, live.
 */
export const postgresDialect: StoreDialect = Object.freeze({
  name: 'postgres',
  title: 'PostgreSQL',
  capabilities: Object.freeze({ crossProcessWake: true, resize: true, separateOperationsStore: true }),
  startLogFields: (target: StoreTarget, tuning: StoreTuning) => ({
    schema: target.schema,
    preparedStatements: tuning.preparedStatements ?? true,
  }),
  migrationScript: (target: StoreTarget) => migrationScript(resolveTableName(target.schema, target.table)),
  explainFailure: (error: unknown, target: StoreTarget) =>
    isDriverFailure(error) ? databaseCheckError(error, resolveTableName(target.schema, target.table)) : undefined,
  open: openPostgres,
});

async function openPostgres(target: StoreTarget, settings: StoreConnectionSettings): Promise<OpenedStore> {
  const pg = (await loadDriver(postgresDialect.title, 'pg', () => import('pg'))).default;
  const pool = new pg.Pool(
    safePoolConfig({
      connectionString: target.url,
      max: settings.connections,
      applicationName: settings.applicationName,
      ...(settings.statementTimeoutMs === undefined ? {} : { queryTimeoutMs: settings.statementTimeoutMs }),
    }),
  );
  pool.on('error', logIdleFailure(settings.logger));
  const database = fromPgPool(pool, { ownsPool: true });
  const tableName = resolveTableName(target.schema, target.table);
  const wakeSignal = pgListenWakeSignal({
    logger: settings.logger,
    connect: async () => {
      const client = new pg.Client(safePoolConfig({ connectionString: target.url, applicationName: `${settings.applicationName} listen` }));
      client.on('error', () => undefined);
      await client.connect();
      return client;
    },
  });
  return {
    dialect: postgresDialect,
    store: new PostgresOutboxStore(database, { ...storeTuning(settings.tuning), schema: target.schema, table: target.table }),
    wakeSignal,
    label: `${target.schema}.${target.table}`,
    migrations,
    migrate: () => runMigrations(database, tableName),
    engine: postgresPartitionEngine(database, tableName),
  };
}
