export {
  fromMysqlPool,
  isConnectionLost,
  mysqlExecutor,
  type MysqlDatabase,
  type MysqlExecutor,
  type MysqlPoolConnectionLike,
  type MysqlPoolLike,
  type MysqlQueryable,
  type MysqlResult,
} from './database.js';
export { mysqlMigrations, type MysqlMigration, type MysqlSchemaSettings } from './migrations.js';
export { mysqlTableNames, type MysqlTableNames } from './table-names.js';
export { MysqlOutboxStore, type MysqlStoreOptions, type MysqlTransaction } from './mysql-store.js';
export type { MysqlServerAddress } from './connection-errors.js';
