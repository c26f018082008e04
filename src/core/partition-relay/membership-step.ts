import { fairShares, shareStep, type ShareStep } from '../partitions/fair-share.js';
import { validUntil, type LeaseTiming } from '../partitions/lease-clock.js';
import type { Membership } from '../ports.js';
import { ownPartitions, type PartitionEntry } from './partition-book.js';

/**
 * What a heartbeat's reply means, by the relay's own monotonic clock:
 * - `rejoin`: my lease ran out (or I was reaped); drop everything and join as a new relay;
 * - `trusted`: the reply came back before the `validUntil` of its own send; the lease runs to that instant;
 * - `late`: the reply came back after it; it confers nothing (the send time counts), and a lapsed relay stays
 *   standing by.
 */
export type BeatVerdict = 'rejoin' | 'trusted' | 'late';

export function beatVerdict(sentAt: number, repliedAt: number, membership: Pick<Membership, 'alive'>, timing: LeaseTiming): BeatVerdict {
  if (!membership.alive) return 'rejoin';
  return repliedAt <= validUntil(sentAt, timing) ? 'trusted' : 'late';
}

/** Why a relay acquires nothing: the table's engine is still v1, or the switch's fence has not passed. */
export function grantsClosed(membership: Pick<Membership, 'config'>): boolean {
  return membership.config.engine !== 'v2' || !membership.config.grantsOpen;
}

/** A resize waits for every partition to be free (`resizeTo`), or the table went back to engine v1: drain and release all. */
export function mustGiveBack(membership: Pick<Membership, 'config'>): boolean {
  return membership.config.resizeTo !== null || membership.config.engine !== 'v2';
}

/**
 * The next fair-share step (all partitions drained while `mustGiveBack`): shares over the live relays that are not leaving, my own holding counted from
 * memory (the reply may predate a grant or release of mine), every share capped at the partition count.
 */
export function nextShareStep(membership: Membership, book: ReadonlyMap<number, PartitionEntry>): ShareStep {
  if (mustGiveBack(membership)) {
    const { owned } = ownPartitions(book);
    return owned.length === 0 ? { kind: 'none' } : { kind: 'drain', partitions: owned };
  }
  if (grantsClosed(membership)) return { kind: 'none' };
  const relays = membership.relays
    .filter((relay) => !relay.leaving)
    .map((relay) => ({ id: relay.id, held: relay.id === membership.relayId ? book.size : relay.held }));
  if (!relays.some((relay) => relay.id === membership.relayId)) return { kind: 'none' };
  const count = membership.config.partitionCount;
  const target = fairShares(count, relays, count).get(membership.relayId) ?? 0;
  return shareStep(target, ownPartitions(book), membership.grantable);
}

/**
 * When (own monotonic clock) the first peer's lease runs out, measured from the reply that reported it, plus a
 * margin for the database's clock: the relay looks again then, so a dead relay's partitions move within about
 * one lease of its last beat instead of waiting for the next heartbeat. `Infinity` without peers.
 */
export function peerExpiryAt(membership: Pick<Membership, 'relays' | 'relayId'>, repliedAt: number, marginMs: number): number {
  const peers = membership.relays.filter((relay) => relay.id !== membership.relayId);
  if (peers.length === 0) return Number.POSITIVE_INFINITY;
  return repliedAt + Math.min(...peers.map((relay) => relay.expiresInMs)) + marginMs;
}
