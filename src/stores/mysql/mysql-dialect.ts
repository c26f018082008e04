import type { Logger } from '../../core/ports.js';
import type { OpenedStore, StoreConnectionSettings, StoreDialect, StoreTarget } from '../../core/ports/store-dialect.js';
import { isDriverFailure } from '../shared/driver-failure.js';
import { loadDriver, logIdleFailure } from '../shared/load-driver.js';
import { mysqlCheckError } from './connection-errors.js';
import { checkPartitionCount, DEFAULT_PARTITION_COUNT } from '../shared/partition-count.js';
import { storeTuning } from '../shared/store-tuning.js';
import { fromMysqlPool } from './database.js';
import { applyMysqlMigrations, mysqlMigrationScript } from './migration-runner.js';
import { mysqlMigrations, resolvedMysqlMigrations } from './migrations.js';
import { MysqlOutboxStore } from './mysql-store.js';
import { mysqlTableNames } from './table-names.js';

/**
 * MariaDB/MySQL: a store over a `mysql2` pool of its own. The URL's path names the database
 * (`mysql://user@host/shop`); `mariadb://` is the same. No NOTIFY: the relay polls, and wakes at once only for
 * writers in its process. The partition count is fixed when the table is created.
 */
export const mysqlDialect: StoreDialect = Object.freeze({
  name: 'mysql',
  title: 'MariaDB/MySQL',
  capabilities: Object.freeze({ crossProcessWake: false, resize: false, separateOperationsStore: true }),
  startLogFields: (target: StoreTarget) => ({ databaseName: databaseNameOf(target.url) }),
  migrationScript: (target: StoreTarget, partitionCount: number | undefined) => {
    const names = mysqlTableNames(target.table);
    return mysqlMigrationScript(
      'outboxer schema',
      names,
      target.table,
      resolvedMysqlMigrations(names, { partitionCount: partitionCount ?? DEFAULT_PARTITION_COUNT }),
    );
  },
  explainFailure: (error: unknown, target: StoreTarget) => (isDriverFailure(error) ? mysqlCheckError(error, mysqlTableNames(target.table)) : undefined),
  open: openMysql,
});

async function openMysql(target: StoreTarget, settings: StoreConnectionSettings): Promise<OpenedStore> {
  const database = await mysqlPool(mysqlUri(target.url), settings.logger, settings.connections, settings.statementTimeoutMs);
  const partitionCount = checkPartitionCount(settings.partitionCount ?? DEFAULT_PARTITION_COUNT);
  const { preparedStatements: _postgresOnly, ...tuning } = storeTuning(settings.tuning);
  const store = new MysqlOutboxStore(database, { table: target.table, ...tuning, partitionCount });
  const names = mysqlTableNames(target.table);
  return {
    dialect: mysqlDialect,
    store,
    wakeSignal: undefined,
    label: `${databaseNameOf(target.url)}.${target.table}`,
    migrations: mysqlMigrations,
    migrate: () => applyMysqlMigrations(database, names, target.table, resolvedMysqlMigrations(names, { partitionCount })),
    engine: undefined,
  };
}

function mysqlUri(url: string): string {
  return url.replace(/^mariadb:/i, 'mysql:');
}

/** MariaDB/MySQL have no schema apart from the database the URL names. */
function databaseNameOf(url: string): string {
  return decodeURIComponent(new URL(mysqlUri(url)).pathname.slice(1)) || '(default database)';
}

interface PooledConnection {
  on(event: 'error', listener: (error: Error) => void): unknown;
  query(sql: string, callback: (error: Error | null) => void): unknown;
}

/**
 * With `statementTimeoutMs`, each connection bounds its statements when it opens (MariaDB's `max_statement_time`,
 * MySQL's `max_execution_time`, which bounds SELECTs; each server ignores the other's variable).
 */
async function mysqlPool(uri: string, logger: Logger, connections: number, statementTimeoutMs: number | undefined) {
  const mysql = await loadDriver(mysqlDialect.title, 'mysql2', () => import('mysql2/promise'));
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
