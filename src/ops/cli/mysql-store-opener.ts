import type { Logger } from '../../core/ports.js';
import { fromMysqlPool, type MysqlPoolLike } from '../../stores/mysql/database.js';
import { applyMysqlMigrations } from '../../stores/mysql/migration-runner.js';
import { mysqlMigrations } from '../../stores/mysql/migrations.js';
import { MysqlOutboxStore } from '../../stores/mysql/mysql-store.js';
import { checkPartitionCount, DEFAULT_PARTITION_COUNT, mysqlTableNames } from '../../stores/mysql/table-names.js';
import type { CliConfig } from './config.js';
import { loadDriver, logIdleFailure, type OpenStore, storeOptions, type StoreOpenOptions } from './database.js';

/**
 * A MariaDB/MySQL store over a `mysql2` pool the CLI owns. The URL's path names the database (`mysql://user@host/shop`);
 * `mariadb://` is accepted as the same. No NOTIFY: the relay polls, and wakes at once only for writers in its process.
 */
export async function openMysqlCliStore(config: CliConfig, url: string, logger: Logger, options: StoreOpenOptions): Promise<OpenStore> {
  const mysql = await loadDriver('mysql2', () => import('mysql2/promise'));
  const uri = url.replace(/^mariadb:/i, 'mysql:');
  const pool = mysql.createPool({
    uri,
    connectionLimit: options.max ?? 2,
    supportBigNumbers: true,
    bigNumberStrings: true,
    enableKeepAlive: true,
    connectTimeout: 10_000,
  });
  pool.on('connection', (connection: { on(event: 'error', listener: (error: Error) => void): unknown }) => connection.on('error', logIdleFailure(logger)));
  const database = fromMysqlPool(pool as unknown as MysqlPoolLike, { ownsPool: true });
  const partitionCount = checkPartitionCount(options.partitionCount ?? DEFAULT_PARTITION_COUNT);
  const store = new MysqlOutboxStore(database, { table: config.table, ...storeOptions(options), partitionCount });
  const names = mysqlTableNames(config.table);
  return {
    dialect: 'mysql',
    store,
    wakeSignal: undefined,
    label: `${decodeURIComponent(new URL(uri).pathname.slice(1)) || '(default database)'}.${config.table}`,
    migrations: mysqlMigrations,
    migrate: () =>
      applyMysqlMigrations(database, names, config.table, mysqlMigrations.map((m) => ({ version: m.version, description: m.description, statements: m.statements(names, { partitionCount }) }))),
    postgres: undefined,
  };
}
