export { inboxMigrations, inboxMigrationScript, runInboxMigrations, type InboxMigration } from './inbox-migrations.js';
export { PostgresInboxStore } from './postgres-inbox-store.js';
export { POSTGRES_INBOX_DEFAULTS, type PostgresInboxStoreOptions } from './postgres-inbox-store-options.js';
export { resolveInboxTableName } from './inbox-sql.js';
