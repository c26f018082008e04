import type { StoreTuning } from '../../core/ports/store-dialect.js';

/** A store's tuning with only the settings a command set: the store's defaults fill the rest. */
export interface DefinedTuning {
  readonly retainPublishedMs?: number;
  readonly idempotencyWindowMs?: number;
  readonly preparedStatements?: boolean;
}

export function storeTuning(tuning: StoreTuning = {}): DefinedTuning {
  const { retainPublishedMs, idempotencyWindowMs, preparedStatements } = tuning;
  return {
    ...(retainPublishedMs === undefined ? {} : { retainPublishedMs }),
    ...(idempotencyWindowMs === undefined ? {} : { idempotencyWindowMs }),
    ...(preparedStatements === undefined ? {} : { preparedStatements }),
  };
}
