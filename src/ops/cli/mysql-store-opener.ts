import type { Logger } from '../../core/ports.js';
import { fromMysqlPool } from '../../stores/mysql/database.js';
import { applyMysqlMigrations } from '../../stores/mysql/migration-runner.js';
import { mysqlMigrations } from '../../stores/mysql/migrations.js';
import { MysqlOutboxStore } from '../../stores/mysql/mysql-store.js';
import { checkPartitionCount, DEFAULT_PARTITION_COUNT, mysqlTableNames } from '../../stores/mysql/table-names.js';
import type { CliConfig } from './config.js';
import { type CliStore, loadDriver, logIdleFailure, type OpenStore, storeOptions, type StoreOpenOptions } from './database.js';
import type { OpsPool } from './ops-store.js';

/**
 * A MariaDB/MySQL store over a `mysql2` pool the CLI owns. The URL's path names the database (`mysql://user@host/shop`);
 * `mariadb://` is accepted as the same. No NOTIFY: the relay polls, and wakes at once only for writers in its process.
 */
export async function openMysqlCliStore(config: CliConfig, url: string, logger: Logger, options: StoreOpenOptions): Promise<OpenStore> {
  const uri = url.replace(/^mariadb:/i, 'mysql:');
  const database = await mysqlPool(uri, logger, options.max ?? 2);
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
      applyMysqlMigrations(
        database,
        names,
        config.table,
        mysqlMigrations.map((m) => ({ version: m.version, description: m.description, statements: m.statements(names, { partitionCount }) })),
      ),
    postgres: undefined,
  };
}

/**
 * The store of the daemon's HTTP server, on a `mysql2` pool of its own: `pool.connections` connections, each with a
 * bound on its statements' time set when it opens (MariaDB's `max_statement_time`, MySQL's `max_execution_time`,
 * which bounds SELECTs; each server ignores the other's variable). Closing the store ends the pool.
 */
export async function openMysqlOpsStore(config: CliConfig, url: string, logger: Logger, options: StoreOpenOptions, pool: OpsPool): Promise<CliStore> {
  const database = await mysqlPool(url.replace(/^mariadb:/i, 'mysql:'), logger, pool.connections, pool.statementTimeoutMs);
  const partitionCount = checkPartitionCount(options.partitionCount ?? DEFAULT_PARTITION_COUNT);
  return new MysqlOutboxStore(database, { table: config.table, ...storeOptions(options), partitionCount });
}

interface PooledConnection {
  on(event: 'error', listener: (error: Error) => void): unknown;
  query(sql: string, callback: (error: Error | null) => void): unknown;
}

async function mysqlPool(uri: string, logger: Logger, connections: number, statementTimeoutMs?: number) {
  const mysql = await loadDriver('mysql2', () => import('mysql2/promise'));
  const pool = mysql.createPool({
    uri,
    connectionLimit: connections,
    supportBigNumbers: true,
    bigNumberStrings: true,
    enableKeepAlive: true,
    connectTimeout: 10_000,
  });
  pool.on('connection', (pooled) => {
    // The promise pool passes on the core pool's event: a connection of the callback API (its typings say otherwise).
    const connection = pooled as unknown as PooledConnection;
    connection.on('error', logIdleFailure(logger));
    if (statementTimeoutMs === undefined) return;
    // Queued on the new connection before the pool hands it out, so they run before its first statement.
    const ignore = () => undefined;
    connection.query(`SET SESSION max_statement_time = ${statementTimeoutMs / 1000}`, ignore);
    connection.query(`SET SESSION max_execution_time = ${statementTimeoutMs}`, ignore);
  });
  return fromMysqlPool(pool, { ownsPool: true });
}
