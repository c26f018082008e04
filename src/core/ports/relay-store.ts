/** A message whose publish failed, with what to do about it. */
export type FailedMessage =
  { readonly id: string; readonly error: string; readonly retryInMs: number } | { readonly id: string; readonly error: string; readonly dead: true };

/**
 * The relay's housekeeping role: what `Relay` needs from a store besides its partition leases and reader
 * (`RelayLeases`, `PartitionReader`).
 *
 * Contract: each call deletes at most `limit` rows and only what the store's retention settings allow, and
 * returns how many it deleted.
 */
export interface RelayStore {
  /** Deletes at most `limit` published messages whose retention has run out (none when rows are deleted at once). */
  purgePublished(limit: number): Promise<number>;
  /** Forgets at most `limit` idempotency keys older than the store's idempotency window. */
  purgeIdempotencyKeys(limit: number): Promise<number>;
}
