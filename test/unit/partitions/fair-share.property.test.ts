import { describe, expect, it } from 'vitest';
import { fairShares, shareStep, type RelayHolding } from '../../../src/core/partitions/fair-share.js';
import { seeded } from '../../support/seeded-random.js';

type Random = () => number;
const int = (random: Random, min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
const sum = (values: Iterable<number>): number => [...values].reduce((a, b) => a + b, 0);

function randomHoldings(random: Random): { partitions: number; relays: RelayHolding[] } {
  const partitions = int(random, 1, 40);
  const relays = Array.from({ length: int(random, 1, 8) }, (_, i) => ({
    id: `relay-${int(random, 0, 9)}${i}`,
    held: int(random, 0, partitions),
  }));
  return { partitions, relays };
}

/**
 * A cluster of relays taking turns. Partition owners are live relays, dead relays (reapable) or nobody. A
 * relay's turn releases what it drained on its previous turn (the drain took that long), then does the step
 * that `fairShares` and `shareStep` give it from what every relay holds now.
 */
class Cluster {
  readonly owner: (string | null)[];
  readonly draining = new Set<number>();

  constructor(
    readonly partitions: number,
    readonly live: string[],
    readonly maxPerRelay: number,
    owner: (string | null)[],
  ) {
    this.owner = owner;
  }

  holdings(): RelayHolding[] {
    return this.live.map((id) => ({ id, held: this.owner.filter((o) => o === id).length }));
  }

  grantable(): number[] {
    return this.owner.flatMap((o, p) => (o === null || !this.live.includes(o) ? [p] : []));
  }

  turn(id: string): void {
    for (const p of [...this.draining]) {
      if (this.owner[p] === id) {
        this.owner[p] = null;
        this.draining.delete(p);
      }
    }
    const target = fairShares(this.partitions, this.holdings(), this.maxPerRelay).get(id) ?? 0;
    const mine = this.owner.flatMap((o, p) => (o === id ? [p] : []));
    const own = { owned: mine.filter((p) => !this.draining.has(p)), draining: mine.filter((p) => this.draining.has(p)) };
    const grantable = this.grantable();
    const step = shareStep(target, own, grantable.length);
    if (step.kind === 'acquire') {
      expect(step.count).toBeLessThanOrEqual(grantable.length);
      for (const p of grantable.slice(0, step.count)) this.owner[p] = id;
    } else if (step.kind === 'drain') {
      for (const p of step.partitions) {
        expect(own.owned).toContain(p);
        this.draining.add(p);
      }
    }
  }

  converged(): boolean {
    const shares = fairShares(this.partitions, this.holdings(), this.maxPerRelay);
    return this.draining.size === 0 && this.holdings().every((relay) => relay.held === shares.get(relay.id));
  }
}

describe('fairShares', () => {
  it('sums to min(P, n x max), and before the cap every share is within one of the others', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const random = seeded(seed);
      const { partitions, relays } = randomHoldings(random);
      const maxPerRelay = int(random, 1, partitions + 2);
      const capped = fairShares(partitions, relays, maxPerRelay);
      expect(sum(capped.values()), `seed ${seed}`).toBe(Math.min(partitions, relays.length * maxPerRelay));
      const uncapped = [...fairShares(partitions, relays, Number.MAX_SAFE_INTEGER).values()];
      expect(Math.max(...uncapped) - Math.min(...uncapped), `seed ${seed}`).toBeLessThanOrEqual(1);
      expect(
        [...capped.values()].every((share) => share <= maxPerRelay),
        `seed ${seed}`,
      ).toBe(true);
    }
  });

  it('gives the remainder to relays already above the floor, so a joiner is not starved (P=4, three relays)', () => {
    const shares = fairShares(
      4,
      [
        { id: 'a', held: 2 },
        { id: 'b', held: 2 },
        { id: 'c', held: 0 },
      ],
      64,
    );
    expect(shares).toEqual(
      new Map([
        ['a', 2],
        ['b', 1],
        ['c', 1],
      ]),
    );
  });

  it('gives nothing and divides nothing when no relay is live', () => {
    expect(fairShares(8, [], 4).size).toBe(0);
  });
});

describe('shareStep', () => {
  it('drains only the surplus not already draining, highest partitions first', () => {
    expect(shareStep(1, { owned: [0, 5, 3], draining: [] }, 0)).toEqual({ kind: 'drain', partitions: [5, 3] });
    expect(shareStep(1, { owned: [0, 3], draining: [5] }, 0)).toEqual({ kind: 'drain', partitions: [3] });
    expect(shareStep(1, { owned: [0], draining: [5, 3] }, 4)).toEqual({ kind: 'none' });
  });

  it('acquires no more than can be granted now, and nothing at its target', () => {
    expect(shareStep(5, { owned: [1], draining: [] }, 2)).toEqual({ kind: 'acquire', count: 2 });
    expect(shareStep(5, { owned: [1], draining: [] }, 0)).toEqual({ kind: 'none' });
    expect(shareStep(2, { owned: [1, 2], draining: [] }, 9)).toEqual({ kind: 'none' });
  });
});

describe('rebalancing rounds from any holdings', () => {
  it('converge to the fair shares within three rounds, and every relay (a joiner too) gets its share', () => {
    let slowest = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const random = seeded(seed);
      const partitions = int(random, 1, 32);
      const live = Array.from({ length: int(random, 1, 6) }, (_, i) => `relay-${int(random, 0, 9)}${i}`);
      const dead = ['dead-1', 'dead-2'];
      const owners = [null, ...live, ...dead];
      const owner = Array.from({ length: partitions }, () => owners[int(random, 0, owners.length - 1)] ?? null);
      const maxPerRelay = int(random, 1, partitions + 1);
      const cluster = new Cluster(partitions, live, maxPerRelay, owner);
      let rounds = 0;
      while (!cluster.converged() && rounds < 10) {
        const order = [...live].sort(() => random() - 0.5);
        for (const id of order) cluster.turn(id);
        rounds++;
      }
      slowest = Math.max(slowest, rounds);
      expect(cluster.converged(), `seed ${seed}`).toBe(true);
      const held = cluster.holdings().map((relay) => relay.held);
      expect(sum(held), `seed ${seed}`).toBe(Math.min(partitions, live.length * maxPerRelay));
      if (partitions >= live.length) expect(Math.min(...held), `seed ${seed}`).toBeGreaterThanOrEqual(1);
    }
    expect(slowest).toBeLessThanOrEqual(3);
  });
});
