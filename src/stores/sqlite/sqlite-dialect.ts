import { OutboxerError } from '../../core/errors.js';
import type { OpenedStore, StoreConnectionSettings, StoreDialect, StoreTarget } from '../../core/ports/store-dialect.js';
import { checkPartitionCount, DEFAULT_PARTITION_COUNT } from '../shared/partition-count.js';
import { storeTuning } from '../shared/store-tuning.js';
import { applySqliteMigrations, sqliteMigrationScript } from './migration-runner.js';
import { resolvedSqliteMigrations, sqliteMigrations } from './migrations.js';
import { openSqliteStore } from './open-sqlite.js';
import { sqliteTableNames } from './table-names.js';

/**
 * SQLite: a store on a connection of its own to the file of `sqlite:<path>` (`sqlite:./demo.db`,
 * `sqlite:/var/lib/app.db`), in WAL mode; the file is created when missing. Relays in other processes may share the
 * file. The HTTP server shares the relay's store: better-sqlite3 runs every statement on the process's one thread.
 */
export const sqliteDialect: StoreDialect = Object.freeze({
  name: 'sqlite',
  title: 'SQLite',
  capabilities: Object.freeze({ crossProcessWake: false, resize: false, separateOperationsStore: false }),
  startLogFields: (target: StoreTarget) => ({ file: sqlitePath(target.url) }),
  migrationScript: (target: StoreTarget, partitionCount: number | undefined) => {
    const names = sqliteTableNames(target.table);
    return sqliteMigrationScript(
      'outboxer schema',
      names,
      target.table,
      resolvedSqliteMigrations(names, { partitionCount: partitionCount ?? DEFAULT_PARTITION_COUNT }),
    );
  },
  // better-sqlite3 opens a file: its errors (SQLITE_CANTOPEN, ...) already say which and why.
  explainFailure: () => undefined,
  open: openSqlite,
});

async function openSqlite(target: StoreTarget, settings: StoreConnectionSettings): Promise<OpenedStore> {
  const path = sqlitePath(target.url);
  const partitionCount = checkPartitionCount(settings.partitionCount ?? DEFAULT_PARTITION_COUNT);
  const { preparedStatements: _postgresOnly, ...tuning } = storeTuning(settings.tuning);
  const store = await openSqliteStore(path, { table: target.table, ...tuning, partitionCount });
  const names = sqliteTableNames(target.table);
  return {
    dialect: sqliteDialect,
    store,
    wakeSignal: undefined,
    label: `${path} ${target.table}`,
    migrations: sqliteMigrations,
    migrate: () => applySqliteMigrations(store.database, names, target.table, resolvedSqliteMigrations(names, { partitionCount })),
    engine: undefined,
  };
}

/** `sqlite:./a.db` -> `./a.db`, `sqlite:/x/a.db` and `sqlite:///x/a.db` -> `/x/a.db`. */
export function sqlitePath(url: string): string {
  const rest = decodeURIComponent(url.slice('sqlite:'.length).split('?')[0] ?? '');
  const path = rest.startsWith('//') ? rest.slice(2) : rest;
  if (path === '') throw new OutboxerError('OUTBOXER_INVALID_OPTION', 'a SQLite URL names a file: sqlite:./outbox.db or sqlite:/var/lib/app/outbox.db');
  return path;
}
