import { resolveLeaseTiming } from '../../src/core/partitions/lease-clock.js';
import { seeded } from '../support/seeded-random.js';
import { LeaseDatabase } from './lease-database.js';
import { LEASE_MS, PUBLISH_TIMEOUT_MS, STEP_MS, type ModelFlags } from './model-flags.js';
import { ModelRelay } from './model-relay.js';
import type { Publish, RelayWorld } from './relay-world.js';

export type Invariant =
  | 'a: one publisher per partition'
  | 'b: superseded writes match nothing'
  | 'c: partitions owned within a bound'
  | 'd: key order of first deliveries'
  | 'e: nothing lost'
  | 'f: an expired relay never revives';

export interface Exploration {
  readonly seed: number;
  /** The first violation, with the simulated instant; null if every invariant held. */
  readonly violation: { readonly invariant: Invariant; readonly at: number; readonly detail: string } | null;
  readonly stats: {
    publishes: number;
    duplicates: number;
    frozenSends: number;
    fencedWrites: number;
    takeovers: number;
    revivals: number;
    faults: number;
    livenessChecks: number;
  };
}

const PARTITIONS = 4;
const KEYS = 8;
const MAIN_MS = 15_000;
/** The quiet phase ends once every row went out and none is pending, or after this long. */
const QUIET_MS = 15 * LEASE_MS;
/** After the last fault ends, every partition is owned again within this (one lease for a dead owner's row). */
const LIVENESS_BOUND_MS = LEASE_MS + 500;
/** Faults strike in the first part of each cycle; the calm rest is where liveness is owed. */
const FAULT_CYCLE_MS = 6000;
const FAULTY_MS = 3000;
const timing = resolveLeaseTiming({ leaseMs: LEASE_MS, publishTimeoutMs: PUBLISH_TIMEOUT_MS });

interface Faults {
  pausedUntil: number;
  cutOffUntil: number;
  slowRepliesUntil: number;
  readonly startedAt: number;
}

/**
 * One seeded run: producers insert keyed rows, relays join, die, pause past their lease, leave, lose the
 * database for a while, get heartbeat replies late and drift their clock rates, and the invariants are
 * checked after every step of `STEP_MS`. Then a quiet phase (faults over, one relay at least) must deliver
 * every row.
 */
export function exploreLeases(seed: number, flags: ModelFlags = {}): Exploration {
  const random = seeded(seed);
  const between = (min: number, max: number): number => min + random() * (max - min);
  const db = new LeaseDatabase(PARTITIONS, flags);
  const relays: ModelRelay[] = [];
  const faults = new Map<ModelRelay, Faults>();
  const active = new Set<Publish>();
  const delivered = new Set<number>();
  const keySeqs = Array.from({ length: KEYS }, (): number[] => []);
  const nextUndelivered = Array.from({ length: KEYS }, () => 0);
  const lastOwned = Array.from({ length: PARTITIONS }, () => 0);
  const stats = { publishes: 0, duplicates: 0, frozenSends: 0, fencedWrites: 0, takeovers: 0, revivals: 0, faults: 0, livenessChecks: 0 };
  let violation: Exploration['violation'] = null;
  let checkedWrites = 0;
  /** When the latest fault ends; liveness is owed from a bound after it. */
  let lastFault = 0;
  let faultsOn = false;
  let now = 0;
  const fail = (invariant: Invariant, detail: string): void => {
    violation ??= { invariant, at: now, detail };
  };
  const bound = flags.clockRateBound ?? 0.15;
  /** Half the time at one end of the allowed band, where a wrong bound shows. */
  const driftedRate = (): number => 1 + (random() < 0.5 ? (random() < 0.5 ? -1 : 1) : 2 * random() - 1) * bound;

  const world: RelayWorld = {
    get realNow() {
      return now;
    },
    random,
    send(relay, heartbeat, statement, onReply, onError) {
      const f = faults.get(relay);
      const failed = (): void => {
        relay.inbox.push({ at: now + between(0, 8), run: onError });
      };
      if (f !== undefined && f.cutOffUntil > now) return failed();
      const stalled = faultsOn && !heartbeat && random() < 0.0005;
      const arrive = now + (stalled ? between(0, 2 * LEASE_MS) : between(0, 8));
      if (stalled) lastFault = Math.max(lastFault, arrive);
      const deliver = (): void => {
        if (f !== undefined && f.cutOffUntil > now) {
          if (random() < 0.5) return failed();
          pendingRequests.push({ at: f.cutOffUntil + between(0, 8), run: deliver });
          return;
        }
        const reply = statement(db);
        const slow = heartbeat && f !== undefined && f.slowRepliesUntil > now;
        relay.inbox.push({ at: now + (slow ? between(0.4, 1.2) * LEASE_MS : between(0, 8)), run: () => onReply(reply) });
      };
      pendingRequests.push({ at: arrive, run: deliver });
    },
    publishStarted(publish) {
      stats.publishes += 1;
      active.add(publish);
    },
    publishEnded(publish) {
      publish.end = now;
      active.delete(publish);
    },
    transmit(publish) {
      if (publish.frozen) stats.frozenSends += 1;
      const { seq, key } = publish.row;
      if (delivered.has(seq)) {
        stats.duplicates += 1;
        return;
      }
      const k = Number(key);
      const seqs = keySeqs[k] ?? [];
      const expected = seqs[nextUndelivered[k] ?? 0];
      if (expected !== seq) fail('d: key order of first deliveries', `seq ${seq} of key ${key} first delivered before seq ${expected}`);
      delivered.add(seq);
      while (delivered.has(seqs[nextUndelivered[k] ?? 0] ?? -1)) nextUndelivered[k] = (nextUndelivered[k] ?? 0) + 1;
    },
  };
  const pendingRequests: { at: number; run: () => void }[] = [];

  const start = (): void => {
    const relay = new ModelRelay(`r${relays.length}`, world, timing, PARTITIONS, flags);
    relay.rate = driftedRate();
    relays.push(relay);
    faults.set(relay, { pausedUntil: 0, cutOffUntil: 0, slowRepliesUntil: 0, startedAt: now });
  };
  const living = (): ModelRelay[] => relays.filter((r) => r.alive && !r.leaving);
  const pick = (): ModelRelay | undefined => living()[Math.floor(random() * living().length)];
  const injectFaults = (): void => {
    const chance = (p: number): boolean => random() < p;
    if (living().length === 0 || (living().length < 5 && chance(0.002))) start();
    const victim = pick();
    const f = victim === undefined ? undefined : faults.get(victim);
    if (victim === undefined || f === undefined || victim.paused) return;
    const faulted = (until: number): void => {
      stats.faults += 1;
      lastFault = Math.max(lastFault, until);
    };
    if (chance(0.0006) && living().length > 1) {
      faulted(now);
      victim.kill();
      // eslint-disable-next-line no-dupe-else-if -- each chance() draws the seeded random again; the order of draws is the run
    } else if (chance(0.0006) && living().length > 1) {
      faulted(now + LEASE_MS);
      victim.startLeaving();
    } else if (chance(0.001)) {
      f.pausedUntil = now + between(0.5, 2.5) * LEASE_MS;
      faulted(f.pausedUntil);
      victim.pause();
    } else if (chance(0.002)) {
      f.cutOffUntil = now + between(0.6, 2) * LEASE_MS;
      // the host's network fails as a whole: the broker stops confirming too, so publishes run to their timeout
      victim.slowBrokerUntil = victim.local + (f.cutOffUntil - now) * victim.rate;
      faulted(f.cutOffUntil);
      // eslint-disable-next-line no-dupe-else-if -- each chance() draws the seeded random again; the order of draws is the run
    } else if (chance(0.001)) {
      f.slowRepliesUntil = now + (flags.livenessDuringSlowReplies ? between(3, 6) : between(1, 2)) * LEASE_MS;
      faulted(flags.livenessDuringSlowReplies ? now : f.slowRepliesUntil);
    }
  };

  const check = (): void => {
    const publishers = new Map<number, Publish>();
    for (const publish of active) {
      if (publish.frozen && !flags.countFrozenSends) continue;
      const other = publishers.get(publish.partition);
      if (other !== undefined && other.holder !== publish.holder) {
        fail(
          'a: one publisher per partition',
          `${other.holder} (seq ${other.row.seq}) and ${publish.holder} (seq ${publish.row.seq}) publish partition ${publish.partition}`,
        );
      }
      publishers.set(publish.partition, publish);
    }
    for (; checkedWrites < db.writes.length; checkedWrites += 1) {
      const write = db.writes[checkedWrites];
      if (!write?.superseded) continue;
      stats.fencedWrites += 1;
      if (write.matched > 0)
        fail('b: superseded writes match nothing', `${write.kind} by ${write.relay} on partition ${write.partition} matched ${write.matched}`);
    }
    db.partitions.forEach((p, partition) => {
      const owner = relays.find((r) => r.id === p.owner && r.alive && !r.paused && r.leaseValid && r.held.has(partition));
      if (owner !== undefined) lastOwned[partition] = now;
    });
    const sound = (r: ModelRelay): boolean => {
      const f = faults.get(r);
      const settled = now - LIVENESS_BOUND_MS;
      return r.alive && !r.leaving && !r.paused && f !== undefined && f.startedAt <= settled && f.cutOffUntil <= now && f.slowRepliesUntil <= settled;
    };
    const steady = relays.some(sound) && lastFault <= now - LIVENESS_BOUND_MS;
    if (!steady) return;
    stats.livenessChecks += 1;
    lastOwned.forEach((at, partition) => {
      if (at < now - LIVENESS_BOUND_MS) {
        const owner = relays.find((r) => r.id === db.partitions[partition]?.owner);
        const state = owner === undefined ? 'no live owner' : `owner ${owner.id}, slow replies ${(faults.get(owner)?.slowRepliesUntil ?? 0) > now}`;
        fail('c: partitions owned within a bound', `partition ${partition} unowned since ${at} (${state})`);
      }
    });
  };

  const run = (until: number, producing: boolean): void => {
    for (; now < until && violation === null; now += STEP_MS) {
      if (!producing && db.pending.size === 0 && delivered.size === db.inserted) break;
      db.now = now;
      if (producing && random() < 0.2) {
        const key = Math.floor(random() * KEYS);
        keySeqs[key]?.push(db.insert(String(key), key % PARTITIONS).seq);
      }
      faultsOn = producing && now % FAULT_CYCLE_MS < FAULTY_MS;
      if (faultsOn) injectFaults();
      for (const request of pendingRequests.filter((r) => r.at <= now)) request.run();
      pendingRequests.splice(0, pendingRequests.length, ...pendingRequests.filter((r) => r.at > now));
      for (const relay of relays) {
        const f = faults.get(relay);
        if (producing && random() < 0.002) relay.rate = driftedRate();
        relay.local += relay.rate * STEP_MS;
        if (relay.paused && f !== undefined && f.pausedUntil <= now) relay.paused = false;
        relay.step();
      }
      check();
    }
  };

  start();
  start();
  run(MAIN_MS, true);
  for (const relay of relays) relay.slowBrokerUntil = 0;
  lastFault = Math.min(lastFault, now);
  for (const f of faults.values()) {
    f.pausedUntil = Math.min(f.pausedUntil, now);
    f.cutOffUntil = Math.min(f.cutOffUntil, now);
    f.slowRepliesUntil = Math.min(f.slowRepliesUntil, now);
  }
  if (living().length === 0) start();
  run(MAIN_MS + QUIET_MS, false);
  const lost = keySeqs.flat().filter((seq) => !delivered.has(seq));
  if (lost.length > 0) fail('e: nothing lost', `${lost.length} rows never delivered, first seq ${lost[0]}`);
  if (db.revivals > 0) fail('f: an expired relay never revives', `${db.revivals} heartbeats extended an expired relays row`);
  stats.takeovers = db.partitions.reduce((sum, p) => sum + p.unclean, 0);
  stats.revivals = db.revivals;
  return { seed, violation, stats };
}
