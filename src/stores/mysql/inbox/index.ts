export {
  mysqlInboxMigrations,
  mysqlInboxMigrationScript,
  runMysqlInboxMigrations,
  type MysqlInboxMigration,
  type MysqlInboxTableNames,
} from './inbox-migrations.js';
export { MysqlInboxStore } from './mysql-inbox-store.js';
export { MYSQL_INBOX_DEFAULTS, type MysqlInboxStoreOptions } from './mysql-inbox-store-options.js';
