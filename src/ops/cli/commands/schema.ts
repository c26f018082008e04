import { createJsonLogger } from '../../../core/logger.js';
import type { CliConfig } from '../config.js';
import { dialectOf, openStore } from '../database.js';
import { EXIT_OK, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { changePartitions } from './change-partitions.js';

/** `outboxer sql [--database-url URL]`: the DDL `migrate` would apply, for the URL's dialect (PostgreSQL without one), on stdout; connects to nothing. */
export async function sqlCommand(config: CliConfig, io: CliIo): Promise<number> {
  const dialect = await dialectOf(config);
  io.out(dialect.migrationScript({ url: config.databaseUrl ?? '', schema: config.schema, table: config.table }, config.migrate?.partitions));
  return EXIT_OK;
}

/**
 * `outboxer migrate`: applies what is missing (idempotent, under the database's lock), then on PostgreSQL resizes
 * when asked (`--partitions`, `--cancel-resize`), and says what it did. On
 * MariaDB/MySQL and SQLite `--partitions` is the count a new table is created with (fixed afterwards).
 */
export async function migrateCommand(config: CliConfig, io: CliIo): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const dialect = await dialectOf(config);
  const settings = config.migrate;
  if (!dialect.capabilities.resize && (settings?.cancelResize === true || settings?.resizeTimeoutMs !== undefined)) {
    throw new UsageError(
      `--cancel-resize and --resize-timeout-ms are for tables that resize live (PostgreSQL's); ${dialect.title} tables keep the partition count they were created with`,
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
    const { engine } = opened;
    if (engine === undefined) {
      const group = await opened.store.relayGroup();
      if (settings?.partitions !== undefined && group.partitionCount !== settings.partitions) {
        io.out(`${opened.label} keeps its ${group.partitionCount} partitions: the count is fixed when a ${dialect.title} table is created\n`);
      }
      return EXIT_OK;
    }
    if (settings !== undefined) await changePartitions(engine, opened.label, settings, io);
    return EXIT_OK;
  } finally {
    await opened.store.close();
  }
}
