import { describeError } from './errors.js';
import type { RelayStore } from './ports.js';
import type { RelayOptions } from './relay-options.js';

/**
 * Deletes retained published rows and expired idempotency keys, in batches of `housekeepingBatchSize` until a
 * batch comes back short or the relay stops. Failures go to `hooks.onError` (stage `housekeeping`), never up.
 */
export async function runHousekeeping(
  store: Pick<RelayStore, 'purgePublished' | 'purgeIdempotencyKeys'>,
  options: RelayOptions,
  isStopping: () => boolean,
): Promise<void> {
  try {
    let removed: number;
    for (const purge of [(n: number) => store.purgePublished(n), (n: number) => store.purgeIdempotencyKeys(n)]) {
      do {
        removed = await purge(options.housekeepingBatchSize);
      } while (removed === options.housekeepingBatchSize && !isStopping());
    }
  } catch (error) {
    options.hooks.onError?.({ stage: 'housekeeping', error: describeError(error) });
  }
}
