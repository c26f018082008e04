import { createJsonLogger } from '../../../core/logger.js';
import { readEngineState } from '../../../stores/postgres/engine/engine-state.js';
import { migrations, migrationScript, runMigrations } from '../../../stores/postgres/migrations.js';
import { resolveTableName } from '../../../stores/postgres/sql.js';
import type { CliConfig } from '../config.js';
import { openStore } from '../database.js';
import { EXIT_OK } from '../errors.js';
import type { CliIo } from '../io.js';
import { changeEngine } from './engine.js';

/** `outboxer sql`: the DDL `migrate` would apply, on stdout; no database involved. */
export function sqlCommand(config: CliConfig, io: CliIo): number {
  io.out(migrationScript(resolveTableName(config.schema, config.table)));
  return EXIT_OK;
}

/**
 * `outboxer migrate`: applies what is missing (idempotent, under an advisory lock), then switches the engine and
 * resizes when asked (`--engine`, `--partitions`, `--cancel-resize`), and says what it did.
 */
export async function migrateCommand(config: CliConfig, io: CliIo): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const { database, tableName } = await openStore(config, logger, { max: 1 });
  try {
    const applied = await runMigrations(database, tableName);
    const name = `${tableName.schema}.${tableName.table}`;
    const latest = migrations.at(-1)?.version ?? 0;
    if (applied.length === 0) {
      io.out(`${name} is up to date (schema version ${latest}); nothing to do\n`);
    } else {
      for (const version of applied) {
        const description = migrations.find((migration) => migration.version === version)?.description ?? '';
        io.out(`applied migration ${version} to ${name}: ${description}\n`);
      }
      io.out(`${name} is now at schema version ${latest}\n`);
    }
    if (config.migrate !== undefined) await changeEngine(database, tableName, config.migrate, io);
    if (config.migrate?.engine === undefined && (await readEngineState(database, tableName)).engine === 'v1') {
      io.out(`${name} still runs engine v1 (relays of this version run engine v2 only and wait on such a table): switch it with \`outboxer migrate --engine v2\`, see docs/upgrading-to-engine-v2.md\n`);
    }
    return EXIT_OK;
  } finally {
    await database.close();
  }
}
