import { ConfigurationError } from '../../core/errors.js';

/** The partition count a new table is created with; 1 to 1024. */
export const DEFAULT_PARTITION_COUNT = 64;

export function checkPartitionCount(count: number): number {
  if (!Number.isSafeInteger(count) || count < 1 || count > 1024) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `partitionCount must be a whole number from 1 to 1024; got ${String(count)}`, {
      options: ['partitionCount'],
    });
  }
  return count;
}
