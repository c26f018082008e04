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

/** Whether a relay acquires nothing now: a resize waits. */
export function grantsClosed(membership: Pick<Membership, 'config'>): boolean {
  return !membership.config.grantsOpen;
}

/** A resize waits for every partition to be free (`resizeTo`): drain and release all. */
export function mustGiveBack(membership: Pick<Membership, 'config'>): boolean {
  return membership.config.resizeTo !== null;
}

/**
 * The next fair-share step (all partitions drained while `mustGiveBack`): shares over the live relays that are
 * neither leaving nor in broker trouble (when none is healthy, nothing held is drained: free partitions are
 * taken up to the fair share over all that are not leaving, so nothing moves while every broker is down), my own holding counted from memory (the reply may predate a grant or
 * release of mine) and my own trouble as I know it now (`troubled`), every share capped at the partition count.
 */
export function nextShareStep(membership: Membership, book: ReadonlyMap<number, PartitionEntry>, troubled = false): ShareStep {
  if (mustGiveBack(membership)) {
    const { owned } = ownPartitions(book);
    return owned.length === 0 ? { kind: 'none' } : { kind: 'drain', partitions: owned };
  }
  if (grantsClosed(membership)) return { kind: 'none' };
  const staying = membership.relays
    .filter((relay) => !relay.leaving)
    .map((relay) =>
      relay.id === membership.relayId ? { id: relay.id, held: book.size, troubled } : { id: relay.id, held: relay.held, troubled: relay.trouble !== null },
    );
  if (!staying.some((relay) => relay.id === membership.relayId)) return { kind: 'none' };
  const healthy = staying.filter((relay) => !relay.troubled);
  const count = membership.config.partitionCount;
  if (healthy.length === 0) {
    // every broker is down: free partitions are taken up to the fair share, and nothing held is given back
    const step = shareStep(fairShares(count, staying, count).get(membership.relayId) ?? 0, ownPartitions(book), membership.grantable);
    return step.kind === 'drain' ? { kind: 'none' } : step;
  }
  const target = fairShares(count, healthy, count).get(membership.relayId) ?? 0;
  return shareStep(target, ownPartitions(book), membership.grantable);
}

/**
 * What of a membership a share depends on: who is live, leaving or in trouble, and how many partitions are
 * grantable. The group check beats at once when it changes.
 */
export function groupShape(membership: Pick<Membership, 'relays' | 'grantable'>): string {
  const relays = membership.relays.map((relay) => `${relay.id}${relay.leaving ? ':leaving' : ''}${relay.trouble === null ? '' : ':trouble'}`);
  return `${relays.join(',')}|${membership.grantable}`;
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
