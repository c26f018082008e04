import type { IncarnationRecord } from './attribution.js';
import type { LedgerRow } from './checker.js';
import type { FaultRecord } from './fault-log.js';
import { latency, type LatencyFigures } from './ownership-figures.js';
import { DEFAULT_DESTINATION } from './spec.js';

/**
 * What a fan-out scenario with a destination outage must show besides the checker's verdict (which already counts
 * loss, phantoms, order and copies per destination).
 */
export interface FanOutTargets {
  /**
   * A destination that was not cut keeps its latency while another one is down: the p99 (commit -> first delivery)
   * of its messages committed during the outage within max(`healthyP99Factor` x the p99 of those committed
   * outside it, that p99 + `healthyP99SlackMs`).
   */
  readonly healthyP99Factor: number;
  readonly healthyP99SlackMs: number;
  /** The cut destination's messages committed before the heal all arrive within this long after it (ms), when given. */
  readonly maxCatchUpMs?: number;
}

/**
 * One destination's latency (commit -> first delivery) by when its messages were committed: before the first
 * outage, during one, from the heal until the cut destination had everything committed before it (`catchUp`: its
 * backlog goes out then), and after that.
 */
export interface DestinationLatency {
  readonly destination: string;
  /** Whether an outage hit this destination (its figures during it are reported, not bounded). */
  readonly cut: boolean;
  readonly before: LatencyFigures;
  readonly during: LatencyFigures;
  readonly catchUp: LatencyFigures;
  readonly after: LatencyFigures;
  /** Before and after together (neither the outage nor the catch-up): the baseline of the target. */
  readonly outside: LatencyFigures;
  /** A healthy destination's bound on `during.p99Ms`: max(factor x outside p99, outside p99 + slack). */
  readonly boundP99Ms: number | null;
}

/** One destination's outage (its own proxy cut: reset + refuse). */
export interface OutageFigure {
  readonly destination: string;
  readonly downMs: number;
  /** From the cut to the first relay reporting the destination paused (`onTopicPaused`, `*@<destination>`). */
  readonly pausedAfterMs: number | null;
  /** From the heal to the first relay reporting it resumed. */
  readonly resumedAfterMs: number | null;
  /** Its messages committed during the outage (held until the heal). */
  readonly heldMessages: number;
  /**
   * The outbox just before the heal (`chaos/faults/destination-faults.ts`): its pending rows, those held with
   * `last_error` `destination missing since ...`, those held behind an earlier row of their key, the most attempts a healthy row of it had used (a hold counts
   * none; a row may have failed once as the cut reset its publish), and the other destinations' pending rows.
   */
  readonly atHeal: Readonly<Record<string, number>>;
  /** From the heal to the first delivery of the last of its messages committed before the heal; null: one never came. */
  readonly caughtUpMs: number | null;
}

export interface FanOutFigures {
  readonly outages: readonly OutageFigure[];
  readonly destinations: readonly DestinationLatency[];
  readonly targets: FanOutTargets;
  /** Targets not met, each as `name value > bound`. */
  readonly missed: readonly string[];
}

export interface FanOutInput {
  /** Every destination, `default` first. */
  readonly destinations: readonly string[];
  readonly ledger: readonly LedgerRow[];
  readonly commitTimes: ReadonlyMap<string, number>;
  readonly firstDelivery: ReadonlyMap<string, number>;
  readonly faults: readonly FaultRecord[];
  readonly incarnations: readonly IncarnationRecord[];
  readonly targets: FanOutTargets;
}

/** Faults that cut one destination off (`chaos/faults/destination-faults.ts`). */
export const DESTINATION_OUTAGE = /^destination-.*-outage$/;

interface PauseEvent {
  readonly t: number;
  readonly e: string;
  readonly topic?: string;
}

/** Latency per destination inside and outside the outages of destinations, and each outage's pause and catch-up. */
export function fanOutFigures(input: FanOutInput): FanOutFigures {
  const outages = input.faults.filter((f) => DESTINATION_OUTAGE.test(f.kind) && f.destinations !== undefined);
  const firstStart = Math.min(...outages.map((f) => f.start));
  const lastEnd = Math.max(...outages.map((f) => f.end));
  const inOutage = (t: number) => outages.some((f) => f.start <= t && t <= f.end);
  const pauses = input.incarnations.flatMap((i) => i.events as readonly PauseEvent[]).filter((e) => e.e === 'topic-paused' || e.e === 'topic-resumed');
  const commitTimesOf = (destination: string) =>
    new Map(
      input.ledger
        .filter((row) => (row.destination ?? DEFAULT_DESTINATION) === destination && input.commitTimes.has(row.id))
        .map((row) => [row.id, input.commitTimes.get(row.id) as number]),
    );
  const { targets } = input;
  /** When each cut destination had everything committed before its heal (never: infinity). */
  const caughtUpAt: number[] = [];
  const outageFigures = outages.flatMap((fault) =>
    (fault.destinations ?? []).map((destination): OutageFigure => {
      const key = `*@${destination}`;
      const paused = pauses.find((e) => e.e === 'topic-paused' && e.topic === key && e.t >= fault.start);
      const resumed = pauses.find((e) => e.e === 'topic-resumed' && e.topic === key && e.t >= fault.end);
      const rows = input.ledger.filter((row) => (row.destination ?? DEFAULT_DESTINATION) === destination && row.kind !== 'poison-large');
      const before = rows.filter((row) => (input.commitTimes.get(row.id) ?? Number.POSITIVE_INFINITY) <= fault.end);
      const arrivals = before.map((row) => input.firstDelivery.get(row.id));
      const caughtUp = arrivals.some((t) => t === undefined) ? null : Math.max(fault.end, ...(arrivals as number[]));
      caughtUpAt.push(caughtUp ?? Number.POSITIVE_INFINITY);
      return {
        destination,
        downMs: fault.end - fault.start,
        pausedAfterMs: paused === undefined ? null : paused.t - fault.start,
        resumedAfterMs: resumed === undefined ? null : resumed.t - fault.end,
        heldMessages: before.filter((row) => (input.commitTimes.get(row.id) as number) >= fault.start).length,
        atHeal: fault.observed ?? {},
        caughtUpMs: caughtUp === null ? null : caughtUp - fault.end,
      };
    }),
  );
  // the cut destinations' backlogs went out until then (never: the catch-up lasts to the end)
  const caughtUp = Math.max(lastEnd, ...caughtUpAt);
  const destinations = input.destinations.map((destination): DestinationLatency => {
    const of = { commitTimes: commitTimesOf(destination), firstDelivery: input.firstDelivery };
    const cut = outages.some((f) => f.destinations?.includes(destination) === true);
    const outside = latency(of, (t) => t < firstStart || t > caughtUp);
    return {
      destination,
      cut,
      before: latency(of, (t) => t < firstStart),
      during: latency(of, inOutage),
      catchUp: latency(of, (t) => t > lastEnd && t <= caughtUp),
      after: latency(of, (t) => t > caughtUp),
      outside,
      boundP99Ms: cut || outside.messages === 0 ? null : Math.max(targets.healthyP99Factor * outside.p99Ms, outside.p99Ms + targets.healthyP99SlackMs),
    };
  });
  const figures = { outages: outageFigures, destinations, targets };
  return { ...figures, missed: missedTargets(figures) };
}

function missedTargets(f: Omit<FanOutFigures, 'missed'>): string[] {
  const missed: string[] = [];
  if (f.outages.length === 0) missed.push('no destination outage measured');
  for (const o of f.outages) {
    if (o.pausedAfterMs === null) missed.push(`${o.destination}: no relay reported it paused during its outage`);
    if (o.caughtUpMs === null) missed.push(`${o.destination}: not every message committed before the heal arrived`);
    else if (f.targets.maxCatchUpMs !== undefined && o.caughtUpMs > f.targets.maxCatchUpMs) {
      missed.push(`${o.destination}: caught up ${o.caughtUpMs} ms after the heal > ${f.targets.maxCatchUpMs}`);
    }
  }
  for (const d of f.destinations) {
    if (d.cut) continue;
    if (d.during.messages === 0 || d.boundP99Ms === null) missed.push(`${d.destination}: p99 during the outage not measured`);
    else if (d.during.p99Ms > d.boundP99Ms) {
      missed.push(`${d.destination}: p99 ms during the outage ${d.during.p99Ms} > ${d.boundP99Ms} (outside ${d.outside.p99Ms})`);
    }
  }
  return missed;
}
