import { describe, expect, it } from 'vitest';
import { exploreLeases, type Exploration, type Invariant } from './lease-exploration.js';
import type { ModelFlags } from './model-flags.js';

const DESIGN_SEEDS = 250;
const MUTANT_SEEDS = 600;

/** The first seed in `1..seeds` whose run breaks an invariant, or null. */
function firstViolation(flags: ModelFlags, seeds: number): Exploration | null {
  for (let seed = 1; seed <= seeds; seed += 1) {
    const run = exploreLeases(seed, flags);
    if (run.violation !== null) return run;
  }
  return null;
}

function expectCaught(flags: ModelFlags, invariants: readonly Invariant[]): Exploration {
  const run = firstViolation(flags, MUTANT_SEEDS);
  expect(run, `no seed in 1..${MUTANT_SEEDS} broke an invariant with ${JSON.stringify(flags)}`).not.toBeNull();
  expect(invariants).toContain(run?.violation?.invariant);
  return run as Exploration;
}

describe('lease protocol model (docs/design/lease-protocol.md)', () => {
  it(`holds every invariant over ${DESIGN_SEEDS} seeds of joins, deaths, pauses, leaves, cut-offs, late replies and drift`, () => {
    const totals = { publishes: 0, duplicates: 0, frozenSends: 0, fencedWrites: 0, takeovers: 0, revivals: 0, faults: 0, livenessChecks: 0 };
    for (let seed = 1; seed <= DESIGN_SEEDS; seed += 1) {
      const run = exploreLeases(seed);
      expect(run.violation, `seed ${seed}`).toBeNull();
      for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += run.stats[key];
    }
    // the faults really happened: zombies sent late, superseded writes were fenced, partitions changed hands,
    // and liveness was owed in calm windows
    expect(totals.frozenSends).toBeGreaterThan(50);
    expect(totals.fencedWrites).toBeGreaterThan(100);
    expect(totals.takeovers).toBeGreaterThan(500);
    expect(totals.duplicates).toBeGreaterThan(0);
    expect(totals.livenessChecks).toBeGreaterThan(50_000);
    expect(totals.revivals).toBe(0);
  });

  it('catches completions without the epoch guard (fencing)', () => {
    expectCaught({ noEpochGuard: true }, ['b: superseded writes match nothing']);
  });

  it('catches a release before the drain ended (publishes still in flight)', () => {
    expectCaught({ releaseBeforeDrain: true }, ['a: one publisher per partition']);
  });

  it('catches validUntil measured from the reply instead of the send', () => {
    expectCaught({ validUntilFromReceipt: true }, ['a: one publisher per partition']);
  });

  it('catches a reap that does not wait for expiry on the database clock', () => {
    expectCaught({ reapBeforeExpiry: true }, ['a: one publisher per partition']);
  });

  it('catches clock rates 30 % apart (beyond the documented 20 %), and the same seed holds at 15 %', () => {
    const run = expectCaught({ clockRateBound: 0.3 }, ['a: one publisher per partition']);
    expect(exploreLeases(run.seed, { clockRateBound: 0.15 }).violation).toBeNull();
  });

  it('catches a heartbeat that revives an expired relay only by its direct check: safety holds without the guard', () => {
    const run = expectCaught({ heartbeatRevives: true }, ['f: an expired relay never revives']);
    expect(run.stats.revivals).toBeGreaterThan(0);
    // (f) is checked last, so a run that broke (a) to (e) would report that instead
    for (let seed = 1; seed <= 100; seed += 1) {
      expect(exploreLeases(seed, { heartbeatRevives: true }).violation?.invariant ?? 'f: an expired relay never revives').toBe(
        'f: an expired relay never revives',
      );
    }
  });

  it('a send frozen by a pause overlaps the next owner (design point 4): it is a duplicate that keeps key order', () => {
    expectCaught({ countFrozenSends: true }, ['a: one publisher per partition']);
  });

  it('without the standby, finds the liveness gap: a relay whose beat replies come late keeps its row alive and its partitions idle', () => {
    expectCaught({ livenessDuringSlowReplies: true, noStandbyWhenLapsed: true }, ['c: partitions owned within a bound']);
  });

  it('closes that gap with the standby: a lapsed relay beats as leaving and releases until a reply is timely', () => {
    for (let seed = 1; seed <= 100; seed += 1) {
      expect(exploreLeases(seed, { livenessDuringSlowReplies: true }).violation, `seed ${seed}`).toBeNull();
    }
  });
});
