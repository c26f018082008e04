export {
  runSqliteInboxMigrations,
  sqliteInboxMigrations,
  sqliteInboxMigrationScript,
  type SqliteInboxMigration,
  type SqliteInboxTableNames,
} from './inbox-migrations.js';
export { SQLITE_INBOX_DEFAULTS, SqliteInboxStore, type SqliteInboxStoreOptions } from './sqlite-inbox-store.js';
