/** Hand-over and broker-cut figures from hand-made ownership samples, relay journals and fault records. */
import { describe, expect, it } from 'vitest';
import type { IncarnationRecord } from '../../chaos/attribution.js';
import type { FaultRecord } from '../../chaos/fault-log.js';
import { type FiguresInput, ownershipFigures, settledSample, unownedTime, withoutTheDead } from '../../chaos/ownership-figures.js';
import { type OwnershipSample, parseRelayName, type SampledRelay } from '../../chaos/ownership-sampler.js';

/** A relays row of slot `slot` (pid 100 + slot) holding `held`; flags by letter: D not live, L leaving, T trouble. */
const r = (slot: number, held: number, flags = ''): SampledRelay => ({
  slot,
  pid: 100 + slot,
  live: !flags.includes('D'),
  leaving: flags.includes('L'),
  trouble: flags.includes('T'),
  held,
});
const s = (t: number, free: number, relays: readonly SampledRelay[], orphaned = 0): OwnershipSample => ({ t, free, orphaned, relays });

function incarnation(slot: number, runningAt: number, exitAt?: number, signal: string | null = null): IncarnationRecord {
  return {
    name: `relay-${slot}-0`,
    exit: exitAt === undefined ? undefined : { code: null, signal, t: exitAt },
    events: [
      { t: runningAt - 1, e: 'start', pid: 100 + slot },
      { t: runningAt, e: 'running' },
    ],
  };
}

const fault = (id: number, kind: string, target: string, start: number, end: number): FaultRecord => ({ id, kind, target, start, end, mayDuplicate: true });

function input(changes: Partial<FiguresInput>): FiguresInput {
  return { samples: [], incarnations: [], faults: [], scheduleStart: 0, commitTimes: new Map(), firstDelivery: new Map(), targets: {}, ...changes };
}

describe('chaos ownership figures', () => {
  it('reads slot and pid from a chaos relay owner name', () => {
    expect(parseRelayName('chaos-relay-chaos_rabbit_hand_over_a1b2c3-2/4711')).toEqual({ slot: 2, pid: 4711 });
    expect(parseRelayName('someone else')).toEqual({ slot: -1, pid: -1 });
  });

  it('sums the time with unowned partitions between samples, clipped to the window', () => {
    const samples = [s(0, 0, [r(0, 8)]), s(100, 4, [r(0, 4)]), s(150, 2, [r(0, 4), r(1, 2)]), s(200, 0, [r(0, 4), r(1, 4)]), s(300, 0, [r(0, 4), r(1, 4)])];
    expect(unownedTime(samples, 0, 300)).toBe(100);
    expect(unownedTime(samples, 120, 300)).toBe(80);
    expect(unownedTime(samples, 0, 130)).toBe(30);
  });

  it('a settled group: nothing unowned, fair shares among the healthy, nothing held by troubled, cut or leaving relays', () => {
    expect(settledSample(s(0, 0, [r(0, 4), r(1, 4)]), new Set())).toBe(true);
    expect(settledSample(s(0, 0, [r(0, 5), r(1, 4), r(2, 0)]), new Set())).toBe(false);
    expect(settledSample(s(0, 0, [r(0, 5), r(1, 4)]), new Set())).toBe(true);
    expect(settledSample(s(0, 1, [r(0, 4), r(1, 3)]), new Set())).toBe(false);
    expect(settledSample(s(0, 0, [r(0, 8), r(1, 0, 'T')]), new Set())).toBe(true);
    expect(settledSample(s(0, 0, [r(0, 4), r(1, 4, 'T')]), new Set())).toBe(false);
    expect(settledSample(s(0, 0, [r(0, 8), r(1, 0)]), new Set([1]))).toBe(true);
    expect(settledSample(s(0, 0, [r(0, 4), r(1, 4, 'L')]), new Set())).toBe(false);
    // every broker down: shares stay where they are
    expect(settledSample(s(0, 0, [r(0, 6, 'T'), r(1, 2, 'T')]), new Set())).toBe(true);
  });

  it('counts what a relays row holds as orphaned once its process has exited, though its lease still runs', () => {
    const sample = s(50, 0, [r(0, 4), r(1, 4)]);
    expect(withoutTheDead(sample, new Map([[101, 40]]))).toEqual(s(50, 0, [r(0, 4), r(1, 4, 'D')], 4));
    expect(withoutTheDead(sample, new Map([[101, 60]]))).toBe(sample);
  });

  it('measures each join and leave in its own window, and checks the target', () => {
    const figures = ownershipFigures(
      input({
        scheduleStart: 1000,
        incarnations: [incarnation(0, 0), incarnation(1, 1000, 3000, 'SIGTERM'), incarnation(2, 5000, 6000, 'SIGKILL')],
        faults: [fault(1, 'leave-sigterm', 'relay-1-0', 2000, 3000), fault(2, 'leave-sigkill-mid-batch', 'relay-2-0', 6000, 6000)],
        samples: [
          s(900, 0, [r(0, 8)]),
          s(1100, 0, [r(0, 8), r(1, 0)]),
          s(1200, 4, [r(0, 4), r(1, 0)]),
          s(1500, 0, [r(0, 4), r(1, 4)]),
          s(2100, 0, [r(0, 4), r(1, 4, 'L')]),
          s(2200, 4, [r(0, 4), r(1, 0, 'L')]),
          s(2300, 0, [r(0, 8)]),
          s(5100, 0, [r(0, 8), r(2, 0)]),
          s(5200, 0, [r(0, 4), r(2, 4)]),
          s(6100, 0, [r(0, 4), r(2, 4)]),
          s(9000, 0, [r(0, 4), r(2, 4, 'D')], 4),
          s(9100, 0, [r(0, 8)]),
        ],
        targets: { maxHandoverUnownedMs: 250 },
      }),
    );
    expect(figures.handovers.map((h) => [h.kind, h.unownedMs, h.settledMs])).toEqual([
      ['join', 300, 500],
      ['leave-sigterm', 100, 300],
      ['join', 0, 200],
      ['leave-sigkill', 3000, 3100],
    ]);
    expect(figures.joinUnownedMaxMs).toBe(300);
    expect(figures.leaveUnownedMaxMs).toBe(100);
    expect(figures.gracefulUnownedTotalMs).toBe(400);
    expect(figures.missed).toEqual(['join unowned ms 300 > 250']);
  });

  it('measures a broker cut: trouble, every partition served, share back, and the latency of what was committed meanwhile', () => {
    const commitTimes = new Map([
      ['a', 500],
      ['b', 1100],
      ['c', 1200],
      ['d', 4500],
    ]);
    const firstDelivery = new Map([
      ['a', 520],
      ['b', 1900],
      ['c', 1300],
      ['d', 4510],
    ]);
    const figures = ownershipFigures(
      input({
        faults: [fault(1, 'relay-broker-outage', 'relay-1-0', 1000, 4000)],
        samples: [
          s(900, 0, [r(0, 4), r(1, 4)]),
          s(1500, 0, [r(0, 4), r(1, 4)]),
          s(2000, 0, [r(0, 4), r(1, 4, 'T')]),
          s(2100, 4, [r(0, 4), r(1, 0, 'T')]),
          s(2300, 0, [r(0, 8), r(1, 0, 'T')]),
          s(4200, 0, [r(0, 8), r(1, 0, 'T')]),
          s(5000, 0, [r(0, 8), r(1, 0)]),
          s(5200, 0, [r(0, 4), r(1, 4)]),
        ],
        commitTimes,
        firstDelivery,
        targets: { maxCutToServedMs: 1000, maxCutLatencyP99Ms: 1000 },
      }),
    );
    expect(figures.cuts).toEqual([
      {
        target: 'relay-1-0',
        downMs: 3000,
        heldAtCut: 4,
        troubleMs: 1000,
        servedMs: 1300,
        shareBackMs: 1200,
        latency: { messages: 2, p50Ms: 100, p99Ms: 800, maxMs: 800 },
      },
    ]);
    expect(figures.handovers.map((h) => [h.kind, h.unownedMs, h.settledMs])).toEqual([
      ['broker-cut', 200, 1300],
      ['broker-back', 0, 1200],
    ]);
    expect(figures.cutToServedMaxMs).toBe(1300);
    expect(figures.latency).toEqual({ messages: 4, p50Ms: 20, p99Ms: 800, maxMs: 800 });
    expect(figures.missed).toEqual(['cut of relay-1-0: served after ms 1300 > 1000']);
  });

  it('a cut never served while it lasted is reported as such, and misses its target', () => {
    const figures = ownershipFigures(
      input({
        faults: [fault(1, 'relay-broker-outage', 'relay-1-0', 1000, 2000)],
        samples: [s(900, 0, [r(0, 4), r(1, 4)]), s(1900, 0, [r(0, 4), r(1, 4)]), s(2100, 0, [r(0, 4), r(1, 4)])],
        targets: { maxCutToServedMs: 3000 },
      }),
    );
    expect(figures.cuts[0]?.servedMs).toBeNull();
    expect(figures.cutToServedMaxMs).toBeNull();
    expect(figures.missed).toEqual(['cut of relay-1-0: served after ms not measured (bound 3000)']);
  });
});
