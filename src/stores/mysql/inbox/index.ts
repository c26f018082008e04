export {
  mysqlInboxMigrations,
  mysqlInboxMigrationScript,
  runMysqlInboxMigrations,
  type MysqlInboxMigration,
  type MysqlInboxTableNames,
} from './inbox-migrations.js';
export { MYSQL_INBOX_DEFAULTS, MysqlInboxStore, type MysqlInboxStoreOptions } from './mysql-inbox-store.js';
