import type { OptionReader } from './option-reader.js';

/** What `outboxer migrate` does after the migrations: the partition count, if asked. */
export interface MigrateSettings {
  /** Resize to this partition count (nothing when the table has it); undefined leaves the count as it is. */
  readonly partitions: number | undefined;
  /** Longest wait of a resize for v2 relays to give their partitions back; undefined takes the store's default. */
  readonly resizeTimeoutMs: number | undefined;
  readonly cancelResize: boolean;
  /** How the resize waits for its lock; undefined takes the store's defaults. */
  readonly lock: { readonly lockTimeoutMs?: number; readonly lockAttempts?: number };
}

/** Reads `migrate`'s flags; combinations that cannot be meant are usage errors (exit 2), before anything connects. */
export function resolveMigrateSettings(reader: OptionReader): MigrateSettings {
  const partitions = reader.integer('partitions');
  const resizeTimeoutMs = reader.integer('resize-timeout-ms');
  const cancelResize = reader.typed('cancel-resize') === true;
  if (cancelResize && partitions !== undefined) {
    throw reader.error('give either --partitions (to resize, or to finish a waiting resize to that count) or --cancel-resize, not both');
  }
  if (resizeTimeoutMs !== undefined && partitions === undefined) throw reader.error('--resize-timeout-ms applies only with --partitions');
  const lockTimeoutMs = reader.integer('lock-timeout-ms');
  const lockAttempts = reader.integer('lock-attempts');
  if ((lockTimeoutMs !== undefined || lockAttempts !== undefined) && partitions === undefined) {
    throw reader.error('--lock-timeout-ms and --lock-attempts apply only with --partitions');
  }
  const lock = Object.freeze({ ...(lockTimeoutMs === undefined ? {} : { lockTimeoutMs }), ...(lockAttempts === undefined ? {} : { lockAttempts }) });
  return Object.freeze({ partitions, resizeTimeoutMs, cancelResize, lock });
}
