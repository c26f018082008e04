/**
 * The chaos checker with fan-out (issue 21), on hand-made ledgers and deliveries: every row is checked at its own
 * destination (order per key and destination, a delivery at the wrong destination is a phantom, a destination's
 * outage explains that destination's copies and delays only), and the latency figures by outage window. No
 * processes: these run in a few milliseconds.
 */
import { describe, expect, it } from 'vitest';
import type { IncarnationRecord } from '../../chaos/attribution.js';
import { check, type CheckInput, type Delivery, type LedgerRow } from '../../chaos/checker.js';
import { fanOutFigures } from '../../chaos/fan-out-figures.js';
import type { FaultRecord } from '../../chaos/fault-log.js';
import { DEFAULT_RELAY } from '../../chaos/spec.js';

const DESTINATIONS = ['default', 'partner', 'analytics'];
const row = (id: string, key: string, version: number, destination: string): LedgerRow => ({ id, key, version, kind: 'normal', destination });
const outage = (start: number, end: number): FaultRecord => ({
  id: 1,
  kind: 'destination-partner-outage',
  start,
  end,
  mayDuplicate: true,
  destinations: ['partner'],
});

function input(ledger: readonly LedgerRow[], deliveries: readonly Delivery[], extra: Partial<CheckInput> = {}): CheckInput {
  return {
    scenario: 'fan-out-test',
    seed: 1,
    relay: DEFAULT_RELAY,
    ledger,
    outbox: [],
    commitTimes: new Map(ledger.map((r) => [r.id, 1000])),
    deliveries,
    incarnations: [],
    faults: [],
    drainMs: 0,
    canaryLeaks: [],
    writerFailures: 0,
    destinations: DESTINATIONS,
    ...extra,
  };
}

describe('chaos checker with fan-out', () => {
  it('orders per key and destination: the partner behind by a whole outage is no inversion', () => {
    const ledger = [row('d1', 'k1', 1, 'default'), row('d2', 'k1', 2, 'default'), row('p1', 'k1', 1, 'partner'), row('p2', 'k1', 2, 'partner')];
    const deliveries: Delivery[] = [
      { t: 1100, id: 'd1', r: false },
      { t: 1200, id: 'd2', r: false },
      { t: 9000, id: 'p1', r: false, to: 'partner' },
      { t: 9100, id: 'p2', r: false, to: 'partner' },
    ];
    const report = check(input(ledger, deliveries, { faults: [outage(1050, 8900)] }));
    expect([report.lost, report.phantom, report.orderInversions, report.stuck]).toEqual([0, 0, 0, 0]);
    expect(report.byDestination?.partner).toMatchObject({ committed: 2, delivered: 2, lost: 0 });
    expect(report.byDestination?.analytics).toMatchObject({ committed: 0, delivered: 0 });
  });

  it('counts an inversion at one destination, and a delivery at the wrong destination as a phantom there', () => {
    const ledger = [row('p1', 'k1', 1, 'partner'), row('p2', 'k1', 2, 'partner'), row('a1', 'k1', 1, 'analytics')];
    const deliveries: Delivery[] = [
      { t: 1100, id: 'p2', r: false, to: 'partner' },
      { t: 1200, id: 'p1', r: false, to: 'partner' },
      { t: 1300, id: 'a1', r: false, to: 'default' },
    ];
    const report = check(input(ledger, deliveries));
    expect(report.orderInversions).toBe(1);
    expect(report.byDestination?.partner?.orderInversions).toBe(1);
    expect(report.phantom).toBe(1);
    expect(report.byDestination?.default?.phantom).toBe(1);
    expect(report.byDestination?.analytics?.lost).toBe(1);
    expect(report.samples.phantom).toEqual(['a1 (at default, stored for analytics)']);
  });

  it("explains a partner copy by the partner's outage, never a copy at another destination", () => {
    const ledger = [row('p1', 'k1', 1, 'partner'), row('d1', 'k1', 1, 'default')];
    const incarnations: IncarnationRecord[] = [
      {
        name: 'relay-0-0',
        exit: undefined,
        events: [
          { t: 1000, e: 'claim', tok: 'a', ids: ['p1', 'd1'] },
          { t: 1100, e: 'send', tok: 'a', id: 'p1' },
          { t: 1100, e: 'send', tok: 'a', id: 'd1' },
        ],
      },
    ];
    const deliveries: Delivery[] = [
      { t: 1150, id: 'd1', r: false },
      { t: 1160, id: 'd1', r: false },
      { t: 1150, id: 'p1', r: false, to: 'partner' },
      { t: 9000, id: 'p1', r: false, to: 'partner' },
    ];
    const report = check(input(ledger, deliveries, { incarnations, faults: [outage(1120, 8000)] }));
    expect(report.duplicates).toBe(2);
    expect(report.duplicatesByFault).toEqual({ '1:destination-partner-outage': 1 });
    expect(report.byDestination?.default?.duplicatesUnattributed).toBe(1);
    expect(report.byDestination?.partner?.duplicatesUnattributed).toBe(0);
  });

  it("a healthy destination's message late during another's outage is stuck: that outage does not excuse it", () => {
    const ledger = [row('d1', 'k1', 1, 'default'), row('p1', 'k1', 1, 'partner')];
    const deliveries: Delivery[] = [
      { t: 20_000, id: 'd1', r: false },
      { t: 21_000, id: 'p1', r: false, to: 'partner' },
    ];
    const report = check(input(ledger, deliveries, { faults: [outage(1500, 19_000)] }));
    expect(report.byDestination?.default?.stuck).toBe(1);
    expect(report.byDestination?.partner?.stuck).toBe(0);
  });
});

describe('fan-out figures', () => {
  /** Messages of `destination` committed at `commits`, each delivered `delay(t)` later. */
  function messages(destination: string, commits: readonly number[], delay: (t: number) => number) {
    const ledger = commits.map((t, i) => row(`${destination}-${i}`, `k${i % 4}`, i + 1, destination));
    return {
      ledger,
      commitTimes: new Map(ledger.map((r, i) => [r.id, commits[i] as number])),
      firstDelivery: new Map(ledger.map((r, i) => [r.id, (commits[i] as number) + delay(commits[i] as number)])),
    };
  }
  const commits = Array.from({ length: 300 }, (_, i) => i * 100); // 0 .. 29.9 s
  const fault: FaultRecord = { ...outage(5000, 15_000), observed: { pending: 90, held: 4 } };

  function figures(healthyDuring: number) {
    const parts = [
      messages('default', commits, (t) => (t >= 5000 && t <= 15_000 ? healthyDuring : 100)),
      messages('partner', commits, (t) => (t >= 5000 && t <= 15_000 ? 15_000 - t + 200 : 100)),
    ];
    return fanOutFigures({
      destinations: ['default', 'partner'],
      ledger: parts.flatMap((p) => p.ledger),
      commitTimes: new Map(parts.flatMap((p) => [...p.commitTimes])),
      firstDelivery: new Map(parts.flatMap((p) => [...p.firstDelivery])),
      faults: [fault],
      incarnations: [
        { name: 'relay-0-0', exit: undefined, events: [{ t: 5100, e: 'topic-paused', topic: '*@partner' } as IncarnationRecord['events'][number]] },
      ],
      targets: { healthyP99Factor: 2, healthyP99SlackMs: 250 },
    });
  }

  it('reports the outage: paused after, caught up after the heal, the outbox at the heal', () => {
    const f = figures(120);
    expect(f.outages).toEqual([
      {
        destination: 'partner',
        downMs: 10_000,
        pausedAfterMs: 100,
        resumedAfterMs: null,
        heldMessages: 101,
        atHeal: { pending: 90, held: 4 },
        caughtUpMs: 200,
      },
    ]);
    expect(f.missed).toEqual([]);
    const healthy = f.destinations.find((d) => d.destination === 'default');
    expect(healthy).toMatchObject({ cut: false, boundP99Ms: 350 });
    expect(healthy?.during).toMatchObject({ messages: 101, p99Ms: 120 });
    expect(f.destinations.find((d) => d.destination === 'partner')?.boundP99Ms).toBeNull();
  });

  it("misses the target when a healthy destination's p99 during the outage is over max(2 x outside, outside + 250 ms)", () => {
    expect(figures(351).missed).toEqual(['default: p99 ms during the outage 351 > 350 (outside 100)']);
  });
});
