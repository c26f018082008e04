import { createJsonLogger } from '../../../core/logger.js';
import { migrationScript } from '../../../stores/postgres/migrations.js';
import { resolveTableName } from '../../../stores/postgres/sql.js';
import { mysqlMigrationScript } from '../../../stores/mysql/migration-runner.js';
import { mysqlMigrations } from '../../../stores/mysql/migrations.js';
import { DEFAULT_PARTITION_COUNT, mysqlTableNames } from '../../../stores/mysql/table-names.js';
import { sqliteMigrationScript } from '../../../stores/sqlite/migration-runner.js';
import { sqliteMigrations } from '../../../stores/sqlite/migrations.js';
import { sqliteTableNames } from '../../../stores/sqlite/table-names.js';
import type { CliConfig } from '../config.js';
import { dialectOf, openStore } from '../database.js';
import { EXIT_OK, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { changePartitions } from './change-partitions.js';

/** `outboxer sql [--database-url URL]`: the DDL `migrate` would apply, for the URL's dialect (PostgreSQL without one), on stdout; connects to nothing. */
export function sqlCommand(config: CliConfig, io: CliIo): number {
  const dialect = config.databaseUrl === undefined ? 'postgres' : dialectOf(config.databaseUrl);
  const partitionCount = config.migrate?.partitions ?? DEFAULT_PARTITION_COUNT;
  if (dialect === 'mysql') {
    const names = mysqlTableNames(config.table);
    const list = mysqlMigrations.map((m) => ({ version: m.version, description: m.description, statements: m.statements(names, { partitionCount }) }));
    io.out(mysqlMigrationScript('outboxer schema', names, config.table, list));
  } else if (dialect === 'sqlite') {
    const names = sqliteTableNames(config.table);
    const list = sqliteMigrations.map((m) => ({ version: m.version, description: m.description, sql: m.sql(names, { partitionCount }) }));
    io.out(sqliteMigrationScript('outboxer schema', names, config.table, list));
  } else {
    io.out(migrationScript(resolveTableName(config.schema, config.table)));
  }
  return EXIT_OK;
}

/**
 * `outboxer migrate`: applies what is missing (idempotent, under the database's lock), then on PostgreSQL resizes
 * when asked (`--partitions`, `--cancel-resize`), and says what it did. On
 * MariaDB/MySQL and SQLite `--partitions` is the count a new table is created with (fixed afterwards).
 */
export async function migrateCommand(config: CliConfig, io: CliIo): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const dialect = config.databaseUrl === undefined ? 'postgres' : dialectOf(config.databaseUrl);
  const settings = config.migrate;
  if (dialect !== 'postgres' && (settings?.cancelResize === true || settings?.resizeTimeoutMs !== undefined)) {
    throw new UsageError(
      '--cancel-resize and --resize-timeout-ms are for PostgreSQL tables; MariaDB/MySQL and SQLite tables keep the partition count they were created with',
      'migrate',
    );
  }
  const opened = await openStore(config, logger, { max: 1, ...(settings?.partitions === undefined ? {} : { partitionCount: settings.partitions }) });
  try {
    const applied = await opened.migrate();
    const latest = opened.migrations.at(-1)?.version ?? 0;
    if (applied.length === 0) {
      io.out(`${opened.label} is up to date (schema version ${latest}); nothing to do\n`);
    } else {
      for (const version of applied) {
        const description = opened.migrations.find((migration) => migration.version === version)?.description ?? '';
        io.out(`applied migration ${version} to ${opened.label}: ${description}\n`);
      }
      io.out(`${opened.label} is now at schema version ${latest}\n`);
    }
    const pg = opened.postgres;
    if (pg === undefined) {
      const group = await opened.store.relayGroup();
      if (settings?.partitions !== undefined && group.partitionCount !== settings.partitions) {
        io.out(`${opened.label} keeps its ${group.partitionCount} partitions: the count is fixed when a MariaDB/MySQL or SQLite table is created\n`);
      }
      return EXIT_OK;
    }
    if (settings !== undefined) await changePartitions(pg.database, pg.tableName, settings, io);
    return EXIT_OK;
  } finally {
    await opened.store.close();
  }
}
