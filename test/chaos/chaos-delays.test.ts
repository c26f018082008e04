/**
 * The chaos checker's stuck rule, on hand-made timelines: a message queued behind a backlog is late, not
 * stuck; one left behind while what came before it went is stuck; a row lock excuses only its own key.
 */
import { describe, expect, it } from 'vitest';
import { type DelayRow, measureDelays, stuckBound } from '../../chaos/delays.js';
import type { FaultRecord } from '../../chaos/fault-log.js';
import { DEFAULT_RELAY } from '../../chaos/spec.js';

const BOUND = stuckBound(DEFAULT_RELAY);

function timeline(rows: readonly (readonly [id: string, key: string, committed: number, delivered: number])[], faults: readonly FaultRecord[] = []) {
  const ledger: DelayRow[] = rows.map(([id, key], i) => ({ id, key, version: i + 1 }));
  return measureDelays({
    ledger,
    commitTimes: new Map(rows.map(([id, , committed]) => [id, committed])),
    firstDelivery: new Map(rows.map(([id, , , delivered]) => [id, delivered])),
    deadAt: () => undefined,
    faults,
    relay: DEFAULT_RELAY,
  });
}

describe('chaos delays: stuck or late', () => {
  it('a backlog worked off in commit order is late (its age is reported), not stuck', () => {
    // 40 messages on 40 keys, committed within 40 ms, delivered one every second.
    const rows = Array.from({ length: 40 }, (_, i) => [`m${i}`, `k${i}`, i, 1000 * (i + 1)] as const);
    const delays = timeline(rows);
    expect(delays.maxUnpublishedAgeMs).toBeGreaterThan(BOUND);
    expect(delays.stuck).toEqual([]);
  });

  it('a message left behind while later ones went is stuck', () => {
    const rows = [['old', 'k0', 0, 3 * BOUND] as const, ...Array.from({ length: 10 }, (_, i) => [`m${i}`, `k${i + 1}`, 10 + i, 50 + i] as const)];
    expect(timeline(rows).stuck).toEqual([`k0 v1 old waited ${3 * BOUND} ms`]);
  });

  it('a row held by a lock excuses its own key only, not the keys committed after it', () => {
    const lock: FaultRecord = { id: 1, kind: 'row-lock-head', keys: ['k0'], start: 0, end: 60_000, mayDuplicate: true };
    const rows = [['locked', 'k0', 0, 60_100] as const, ['next', 'k0', 5, 60_200] as const, ['other', 'k1', 10, 30_000] as const];
    expect(timeline(rows, [lock]).stuck).toEqual([`k1 v3 other waited ${30_000 - 10} ms`]);
  });
});
