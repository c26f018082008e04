import { OutboxerError } from '../../core/errors.js';
import { checkPartitionCount, DEFAULT_PARTITION_COUNT } from '../../stores/shared/partition-count.js';
import { applySqliteMigrations } from '../../stores/sqlite/migration-runner.js';
import { sqliteMigrations } from '../../stores/sqlite/migrations.js';
import { sqliteTableNames } from '../../stores/sqlite/table-names.js';
import { openSqliteStore } from '../../stores/sqlite/open-sqlite.js';
import type { SqliteOutboxStore } from '../../stores/sqlite/sqlite-store.js';
import type { CliConfig } from './config.js';
import { type OpenStore, storeOptions, type StoreOpenOptions } from './database.js';
import { CliFailure } from './errors.js';

/**
 * A SQLite store on a connection of its own to the file of `sqlite:<path>` (`sqlite:./demo.db`, `sqlite:/var/lib/app.db`),
 * in WAL mode; the file is created when missing. Relays in other processes may share the file.
 */
export async function openSqliteCliStore(config: CliConfig, url: string, options: StoreOpenOptions): Promise<OpenStore> {
  const path = sqlitePath(url);
  const partitionCount = checkPartitionCount(options.partitionCount ?? DEFAULT_PARTITION_COUNT);
  let store: SqliteOutboxStore;
  try {
    store = await openSqliteStore(path, { table: config.table, ...storeOptions(options), partitionCount });
  } catch (error) {
    if (error instanceof OutboxerError && error.code === 'OUTBOXER_INVALID_OPTION' && error.message.includes('better-sqlite3')) {
      throw new CliFailure('OUTBOXER_MISSING_DEPENDENCY', "this command needs the 'better-sqlite3' package: npm install better-sqlite3");
    }
    throw error;
  }
  const names = sqliteTableNames(config.table);
  return {
    dialect: 'sqlite',
    store,
    wakeSignal: undefined,
    label: `${path} ${config.table}`,
    migrations: sqliteMigrations,
    migrate: () =>
      applySqliteMigrations(
        store.database,
        names,
        config.table,
        sqliteMigrations.map((m) => ({ version: m.version, description: m.description, sql: m.sql(names, { partitionCount }) })),
      ),
    postgres: undefined,
  };
}

/** `sqlite:./a.db` -> `./a.db`, `sqlite:/x/a.db` and `sqlite:///x/a.db` -> `/x/a.db`. */
export function sqlitePath(url: string): string {
  const rest = decodeURIComponent(url.slice('sqlite:'.length).split('?')[0] ?? '');
  const path = rest.startsWith('//') ? rest.slice(2) : rest;
  if (path === '') throw new CliFailure('OUTBOXER_INVALID_OPTION', 'a SQLite URL names a file: sqlite:./outbox.db or sqlite:/var/lib/app/outbox.db');
  return path;
}
