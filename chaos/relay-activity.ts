import type { IncarnationRecord } from './attribution.js';

export interface RelayActivity {
  /** The most relays running at once (from each one's `running` to its exit). */
  readonly relaysPeak: number;
  /** Completions (journaled as marks and failures) that wrote fewer rows than asked: a relay fenced off what it no longer held. */
  readonly fencedWrites: number;
}

const WRITES = new Set(['mark', 'markFailed', 'release']);

/** What the relays did that the verdict does not count but a reader wants to see: how many ran, how often fenced. */
export function relayActivity(incarnations: readonly IncarnationRecord[]): RelayActivity {
  const changes: [number, number][] = [];
  let fencedWrites = 0;
  for (const incarnation of incarnations) {
    const running = incarnation.events.find((event) => event.e === 'running');
    if (running !== undefined) {
      changes.push([running.t, 1]);
      changes.push([incarnation.exit?.t ?? Number.MAX_SAFE_INTEGER, -1]);
    }
    fencedWrites += incarnation.events.filter((event) => WRITES.has(event.e) && event.n !== undefined && event.n < (event.ids?.length ?? 0)).length;
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let relaysPeak = 0;
  for (const [, step] of changes) {
    now += step;
    relaysPeak = Math.max(relaysPeak, now);
  }
  return { relaysPeak, fencedWrites };
}
