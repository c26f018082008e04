/** A live relay that is not leaving, as the membership reports it: its id and how many partitions it holds. */
export interface RelayHolding {
  readonly id: string;
  /** Partitions it owns or is draining. */
  readonly held: number;
}

/** One relay's own partitions: those it publishes and those it is draining before release. */
export interface OwnPartitions {
  readonly owned: readonly number[];
  readonly draining: readonly number[];
}

/** What a relay does next about its share: take more partitions, drain some, or nothing. */
export type ShareStep =
  { readonly kind: 'acquire'; readonly count: number } | { readonly kind: 'drain'; readonly partitions: readonly number[] } | { readonly kind: 'none' };

/**
 * Each relay's target number of partitions out of `partitions`: the floor of an even split, and the remainder
 * one each, first to relays already above the floor (so incumbents keep what they hold and nothing moves
 * twice), then by id; every share capped at `maxPerRelay`. The shares sum to
 * `min(partitions, relays.length * maxPerRelay)`, and before the cap differ by at most one. A plain
 * `ceil(partitions / n)` would starve a joiner: with 4 partitions and 3 relays at 2, 2 and 0, nobody is above
 * their ceiling, so nobody releases.
 */
export function fairShares(partitions: number, relays: readonly RelayHolding[], maxPerRelay: number): Map<string, number> {
  const shares = new Map<string, number>();
  if (relays.length === 0) return shares;
  const floor = Math.floor(partitions / relays.length);
  let remainder = partitions % relays.length;
  const byId = [...relays].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const aboveFloor = byId.filter((relay) => relay.held > floor);
  const atOrBelow = byId.filter((relay) => relay.held <= floor);
  for (const relay of [...aboveFloor, ...atOrBelow]) {
    const extra = remainder > 0 ? 1 : 0;
    remainder -= extra;
    shares.set(relay.id, Math.min(floor + extra, maxPerRelay));
  }
  return shares;
}

/**
 * One relay's next step toward `target`. Above it, drain the surplus that is not already draining (the
 * highest-numbered owned partitions, so repeated steps pick the same ones). Below it, acquire at most what
 * can be granted now (`grantable`: free partitions plus those of reapable relays), never more.
 */
export function shareStep(target: number, own: OwnPartitions, grantable: number): ShareStep {
  const held = own.owned.length + own.draining.length;
  if (held > target) {
    const surplus = held - target - own.draining.length;
    if (surplus <= 0) return { kind: 'none' };
    const highestFirst = [...own.owned].sort((a, b) => b - a);
    return { kind: 'drain', partitions: highestFirst.slice(0, surplus) };
  }
  const count = Math.min(target - held, Math.max(0, grantable));
  return count > 0 ? { kind: 'acquire', count } : { kind: 'none' };
}
