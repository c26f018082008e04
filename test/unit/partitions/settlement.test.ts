import { describe, expect, it } from 'vitest';
import { afterRead, newOwner, recheckRange } from '../../../src/core/partitions/settlement.js';

describe('settlement of one partition', () => {
  it('starts a new owner from the beginning, with nothing to recheck', () => {
    expect(newOwner.position).toBeNull();
    expect(recheckRange(newOwner)).toBeNull();
  });

  it('pushes the range a fresh read passed and drops it after one recheck by a read whose xmin reached its tag', () => {
    let state = afterRead(newOwner, { xmin: 90n, tag: 100n, reached: 5n });
    expect(state.position).toBe(5n);
    const range = recheckRange(state);
    expect(range).toEqual({ from: null, to: 5n, tag: 100n });
    const sent = range ?? { from: null, to: 0n, tag: 0n };
    // xmin 99 < tag 100: a transaction that drew a seq <= 5 may still run, so the statement skipped the recheck.
    state = afterRead(state, { xmin: 99n, tag: 101n, reached: 9n, recheck: { range: sent, last: null, full: false } });
    expect(state.ranges).toEqual([
      { from: null, to: 5n, tag: 100n },
      { from: 5n, to: 9n, tag: 101n },
    ]);
    state = afterRead(state, { xmin: 100n, tag: 102n, reached: null, recheck: { range: sent, last: 3n, full: false } });
    expect(state.ranges).toEqual([{ from: 5n, to: 9n, tag: 101n }]);
    expect(recheckRange(state)).toEqual({ from: 5n, to: 9n, tag: 101n });
  });

  it('merges the ranges the horizon settled into one recheck, and keeps the rest of a recheck that filled its take', () => {
    let state = newOwner;
    for (const [tag, reached] of [
      [10n, 4n],
      [11n, 8n],
      [12n, 12n],
    ] as const)
      state = afterRead(state, { xmin: 1n, tag, reached });
    state = afterRead(state, { xmin: 11n, tag: 13n, reached: null });
    const range = recheckRange(state);
    expect(range).toEqual({ from: null, to: 8n, tag: 11n });
    state = afterRead(state, { xmin: 11n, tag: 14n, reached: null, recheck: { range: range ?? { from: null, to: 0n, tag: 0n }, last: 6n, full: true } });
    expect(state.ranges).toEqual([
      { from: 6n, to: 8n, tag: 11n },
      { from: 8n, to: 12n, tag: 12n },
    ]);
    expect(recheckRange(state)).toEqual({ from: 6n, to: 8n, tag: 11n });
  });

  it('keeps at most maxRanges, merging the oldest under the newer tag (which only delays the recheck)', () => {
    let state = newOwner;
    for (let i = 1n; i <= 100n; i++) state = afterRead(state, { xmin: 1n, tag: 100n + i, reached: i * 10n });
    expect(state.ranges).toHaveLength(64);
    expect(state.ranges[0]).toEqual({ from: null, to: 370n, tag: 137n });
    expect(state.ranges.every((range, i) => i === 0 || range.from === state.ranges[i - 1]?.to)).toBe(true);
  });

  it('starts over when the xmin or the tag goes backwards (a restored or different cluster)', () => {
    const state = afterRead(afterRead(newOwner, { xmin: 500n, tag: 600n, reached: 7n }), { xmin: 600n, tag: 601n, reached: 9n });
    expect(afterRead(state, { xmin: 20n, tag: 30n, reached: 3n })).toEqual({ position: null, ranges: [], horizon: 20n });
    expect(afterRead(state, { xmin: 600n, tag: 30n, reached: null })).toEqual({ position: null, ranges: [], horizon: 600n });
  });

  it('handles 64-bit xids and seqs beyond the safe integers', () => {
    const big = 2n ** 62n;
    const state = afterRead(afterRead(newOwner, { xmin: big, tag: big + 1n, reached: big }), { xmin: big + 1n, tag: big + 2n, reached: null });
    expect(recheckRange(state)).toEqual({ from: null, to: big, tag: big + 1n });
  });
});
