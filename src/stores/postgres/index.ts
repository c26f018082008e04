export { affectedRows, fromPgPool, type PgDatabase, type PgPoolLike, type QueryResultLike, type SqlExecutor } from './database.js';
export { migrations, migrationScript, runMigrations, type Migration } from './migrations.js';
export { safePoolConfig, type SafePoolOptions } from './pool.js';
export { PostgresOutboxStore, type PostgresStoreOptions } from './postgres-store.js';
export { resolveTableName, type TableName } from './sql.js';
export {
  DEFAULT_WAKE_CHANNEL,
  pgCommitNotifier,
  pgListenWakeSignal,
  type ListenClientLike,
  type PgCommitNotifierOptions,
  type PgListenWakeSignalOptions,
} from './wakeup.js';
export { readEngineState } from './engine/engine-state.js';
export { cancelResize, resizePartitions, type ResizeOptions } from './engine/resize-partitions.js';
export { readEngineRelays } from './engine/engine-relays.js';
export type {
  EngineRelay,
  EngineRelays,
  EngineState,
  PartitionEngine,
  ResizeCancellation,
  ResizeProgress,
  ResizeResult,
} from '../../core/ports/partition-engine.js';
