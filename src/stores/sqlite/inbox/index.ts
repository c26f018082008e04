export {
  runSqliteInboxMigrations,
  sqliteInboxMigrations,
  sqliteInboxMigrationScript,
  type SqliteInboxMigration,
  type SqliteInboxTableNames,
} from './inbox-migrations.js';
export { SqliteInboxStore } from './sqlite-inbox-store.js';
export { SQLITE_INBOX_DEFAULTS, type SqliteInboxStoreOptions } from './sqlite-inbox-store-options.js';
