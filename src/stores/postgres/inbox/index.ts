export { inboxMigrations, inboxMigrationScript, runInboxMigrations, type InboxMigration } from './inbox-migrations.js';
export { POSTGRES_INBOX_DEFAULTS, PostgresInboxStore, type PostgresInboxStoreOptions } from './postgres-inbox-store.js';
export { resolveInboxTableName } from './inbox-sql.js';
