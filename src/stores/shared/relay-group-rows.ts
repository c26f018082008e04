import type { RelayGroup, RelayGroupMember } from '../../core/ports.js';

/** One row of a store's relay-group read: a live relay, or a partition of the current generation with its owner. */
export type RelayGroupRow =
  | {
      readonly kind: 'relay';
      readonly partitionCount: number;
      readonly relayId: string;
      readonly name: string;
      readonly leaving: boolean;
      readonly expiresInMs: number;
      readonly trouble: string | null;
      /** `trouble_since` as ms since the Unix epoch (database clock), or null. */
      readonly troubleSinceMs: number | null;
    }
  | { readonly kind: 'partition'; readonly partitionCount: number; readonly owner: string | null; readonly partition: number };

/**
 * Groups the flat rows every store reads (one per live relay, one per partition) into the relay group: each live
 * relay with the partitions it holds, by name then id, and the partitions no live relay holds.
 */
export function relayGroupOf(rows: readonly RelayGroupRow[]): RelayGroup {
  const live = new Map<string, Omit<RelayGroupMember, 'partitions'> & { partitions: number[] }>();
  let partitionCount = 0;
  for (const row of rows) {
    partitionCount = Math.max(partitionCount, row.partitionCount);
    if (row.kind !== 'relay') continue;
    const trouble = row.trouble === null ? null : { reason: row.trouble, since: new Date(row.troubleSinceMs ?? Number.NaN) };
    live.set(row.relayId, { id: row.relayId, name: row.name, leaving: row.leaving, expiresInMs: row.expiresInMs, trouble, partitions: [] });
  }
  const unowned: number[] = [];
  for (const row of rows) {
    if (row.kind !== 'partition') continue;
    const owner = row.owner === null ? undefined : live.get(row.owner);
    if (owner === undefined) unowned.push(row.partition);
    else owner.partitions.push(row.partition);
  }
  const byNumber = (a: number, b: number) => a - b;
  const relays = [...live.values()]
    .map((relay) => ({ ...relay, partitions: relay.partitions.sort(byNumber) }))
    .sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1));
  return { partitionCount, relays, unowned: unowned.sort(byNumber) };
}

/** A nullable number column of any driver (number, bigint text, or null) as a number or null. */
export function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}
