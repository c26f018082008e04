import type { OptionReader } from './option-reader.js';

/** What `outboxer migrate` does after the migrations: the engine switch and the partition count, if asked. */
export interface MigrateSettings {
  /** Switch the table to this engine; undefined leaves the engine as it is. */
  readonly engine: 'v1' | 'v2' | undefined;
  /** Resize to this partition count (nothing when the table has it); undefined leaves the count as it is. */
  readonly partitions: number | undefined;
  /** Longest wait of a resize for v2 relays to give their partitions back; undefined takes the store's default. */
  readonly resizeTimeoutMs: number | undefined;
  readonly cancelResize: boolean;
  /** How the switch and the resize wait for their locks; undefined takes the store's defaults. */
  readonly lock: { readonly lockTimeoutMs?: number; readonly lockAttempts?: number };
}

/** Reads `migrate`'s flags; combinations that cannot be meant are usage errors (exit 2), before anything connects. */
export function resolveMigrateSettings(reader: OptionReader): MigrateSettings {
  const engine = reader.isFlag('engine') ? reader.oneOf<'v1' | 'v2'>('engine', ['v1', 'v2'], 'v1') : undefined;
  const partitions = reader.integer('partitions');
  const resizeTimeoutMs = reader.integer('resize-timeout-ms');
  const cancelResize = reader.typed('cancel-resize') === true;
  if (cancelResize && partitions !== undefined) {
    throw reader.error('give either --partitions (to resize, or to finish a waiting resize to that count) or --cancel-resize, not both');
  }
  if (resizeTimeoutMs !== undefined && partitions === undefined) throw reader.error('--resize-timeout-ms applies only with --partitions');
  const lockTimeoutMs = reader.integer('lock-timeout-ms');
  const lockAttempts = reader.integer('lock-attempts');
  if ((lockTimeoutMs !== undefined || lockAttempts !== undefined) && engine === undefined && partitions === undefined) {
    throw reader.error('--lock-timeout-ms and --lock-attempts apply only with --engine or --partitions');
  }
  const lock = Object.freeze({ ...(lockTimeoutMs === undefined ? {} : { lockTimeoutMs }), ...(lockAttempts === undefined ? {} : { lockAttempts }) });
  return Object.freeze({ engine, partitions, resizeTimeoutMs, cancelResize, lock });
}
