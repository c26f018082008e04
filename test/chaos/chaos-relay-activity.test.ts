/** How many relays ran at once, and how many marks were fenced, from hand-made relay journals. */
import { describe, expect, it } from 'vitest';
import type { IncarnationRecord } from '../../chaos/attribution.js';
import { relayActivity } from '../../chaos/relay-activity.js';

function relay(name: string, runningAt: number, exitAt: number | undefined, marks: readonly [number, number][] = []): IncarnationRecord {
  return {
    name,
    exit: exitAt === undefined ? undefined : { code: 0, signal: null, t: exitAt },
    events: [
      { t: runningAt - 5, e: 'start' },
      { t: runningAt, e: 'running' },
      ...marks.map(([ids, n]) => ({ t: runningAt + 1, e: 'mark', tok: 'x', ids: Array.from({ length: ids }, (_, i) => `m${i}`), n })),
    ],
  };
}

describe('chaos relay activity', () => {
  it('counts the relays running at once: 1 -> 4 -> 1, and a relay that never ran counts for nothing', () => {
    const never: IncarnationRecord = { name: 'relay-3-0', exit: { code: null, signal: 'SIGKILL', t: 50 }, events: [] };
    const activity = relayActivity([
      relay('relay-0-0', 0, undefined),
      relay('relay-1-0', 10, 60),
      relay('relay-2-0', 20, 50),
      relay('relay-3-1', 30, 40),
      never,
    ]);
    expect(activity.relaysPeak).toBe(4);
  });

  it('a relay that exits as another starts does not count twice', () => {
    expect(relayActivity([relay('relay-0-0', 0, 10), relay('relay-0-1', 10, undefined)]).relaysPeak).toBe(1);
  });

  it('counts marks, failures and releases that wrote fewer rows than asked as fenced', () => {
    const zombie = relay('relay-0-0', 0, 10, [
      [3, 3],
      [3, 1],
      [2, 0],
    ]);
    const released = {
      ...zombie,
      events: [...zombie.events, { t: 9, e: 'release', tok: 'x', ids: ['r1', 'r2'], n: 0 }, { t: 9, e: 'markFailed', tok: 'x', ids: ['f1'], n: 1 }],
    };
    expect(relayActivity([released]).fencedWrites).toBe(3);
  });
});
