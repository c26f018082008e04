import type { IncarnationRecord } from './attribution.js';
import type { FaultRecord } from './fault-log.js';
import { type OwnershipSample, partitionCount, type SampledRelay, unowned } from './ownership-sampler.js';

/** What a scenario that samples partition ownership must show; each bound is in ms and checked when given. */
export interface OwnershipTargets {
  /** Most unowned time one join or one graceful leave (SIGTERM) may leave, summed over its window. */
  readonly maxHandoverUnownedMs?: number;
  /** Longest from the cut of one relay's broker to every partition held by live relays whose broker is up. */
  readonly maxCutToServedMs?: number;
  /** p99 of commit -> first delivery of the messages committed while one relay's broker was cut. */
  readonly maxCutLatencyP99Ms?: number;
}

/** A change of the group the relays must hand partitions over for. */
export type HandoverKind = 'join' | 'leave-sigterm' | 'leave-sigkill' | 'broker-cut' | 'broker-back';

export interface HandoverFigure {
  readonly kind: HandoverKind;
  /** The relay incarnation that joined, left, or whose broker was cut or came back. */
  readonly target: string;
  /** ms since the first sample. */
  readonly atMs: number;
  /**
   * How long, within the event's window (to the next event), any partition was unowned: free, or its owner not
   * live (lease run out, row gone, or its process exited).
   */
  readonly unownedMs: number;
  /** The most partitions unowned in one sample of the window. */
  readonly unownedPeak: number;
  /** From the event to the first sample in which the group holds the shares the design asks for; null: not in the window. */
  readonly settledMs: number | null;
}

export interface LatencyFigures {
  readonly messages: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface CutFigure {
  readonly target: string;
  readonly downMs: number;
  /** Partitions the victim held in the last sample before the cut. */
  readonly heldAtCut: number;
  /** From the cut to the first sample in which the victim's row reports trouble. */
  readonly troubleMs: number | null;
  /** From the cut to the first sample in which every partition is held by a live relay whose broker is up. */
  readonly servedMs: number | null;
  /** From the heal to the first sample in which the victim, out of trouble, holds its fair share again. */
  readonly shareBackMs: number | null;
  /** Commit -> first delivery of the messages committed during the cut. */
  readonly latency: LatencyFigures;
}

export interface OwnershipFigures {
  readonly samples: number;
  readonly sampleGapMeanMs: number;
  readonly sampleGapMaxMs: number;
  readonly handovers: readonly HandoverFigure[];
  /** The largest `unownedMs` of a join, of a graceful leave; the sum over every join and graceful leave. */
  readonly joinUnownedMaxMs: number | null;
  readonly leaveUnownedMaxMs: number | null;
  readonly gracefulUnownedTotalMs: number;
  readonly cuts: readonly CutFigure[];
  readonly cutToServedMaxMs: number | null;
  /** Every message committed during any cut, together. */
  readonly cutLatency: LatencyFigures;
  /** Every delivered message of the run, for comparison. */
  readonly latency: LatencyFigures;
  /** Targets not met, each as `name value > bound`. */
  readonly missed: readonly string[];
}

export interface FiguresInput {
  readonly samples: readonly OwnershipSample[];
  readonly incarnations: readonly IncarnationRecord[];
  readonly faults: readonly FaultRecord[];
  /** When the fault schedule began: relays that run from then on joined. */
  readonly scheduleStart: number;
  readonly commitTimes: ReadonlyMap<string, number>;
  readonly firstDelivery: ReadonlyMap<string, number>;
  readonly targets: OwnershipTargets;
}

interface Event {
  readonly kind: HandoverKind;
  readonly target: string;
  readonly t: number;
  readonly cut?: FaultRecord;
}

/** Faults that cut one relay's broker off (`chaos/faults/broker-cut.ts`). */
export const BROKER_CUT_PREFIX = 'relay-broker-';
const LEAVE = /^(leave-)?sig(term|kill)/;
const slotOf = (incarnation: string): number => Number(/^relay-(\d+)-/.exec(incarnation)?.[1] ?? -1);

/** Hand-over, broker-cut and latency figures from the ownership samples, the relays' journals and the fault log. */
export function ownershipFigures(input: FiguresInput): OwnershipFigures {
  const exits = exitsByPid(input.incarnations);
  const samples = [...input.samples].sort((a, b) => a.t - b.t).map((s) => withoutTheDead(s, exits));
  const first = samples[0]?.t ?? 0;
  const last = samples.at(-1)?.t ?? 0;
  const events = handoverEvents(input);
  const cuts = events.filter((e) => e.cut !== undefined).map((e) => e.cut as FaultRecord);
  const cutSlots = (t: number) => new Set(cuts.filter((c) => c.start <= t && t < c.end).map((c) => slotOf(c.target ?? '')));
  const handovers = events.map((event, i) => {
    const end = events[i + 1]?.t ?? last;
    const window = samples.filter((s) => s.t >= event.t && s.t <= end);
    const settled = window.find((s) => targetSettled(event, s) && settledSample(s, cutSlots(s.t)));
    return {
      kind: event.kind,
      target: event.target,
      atMs: event.t - first,
      unownedMs: unownedTime(samples, event.t, end),
      unownedPeak: Math.max(0, ...window.map(unowned)),
      settledMs: settled === undefined ? null : Math.max(0, settled.t - event.t),
    };
  });
  const cutFigures = cuts.map((cut) => cutFigure(cut, samples, cutSlots, input));
  const graceful = handovers.filter((h) => h.kind === 'join' || h.kind === 'leave-sigterm');
  const maxOf = (values: readonly number[]) => (values.length === 0 ? null : Math.max(...values));
  const inCut = (t: number) => cuts.some((c) => c.start <= t && t <= c.end);
  const figures = {
    samples: samples.length,
    ...gaps(samples),
    handovers,
    joinUnownedMaxMs: maxOf(handovers.filter((h) => h.kind === 'join').map((h) => h.unownedMs)),
    leaveUnownedMaxMs: maxOf(handovers.filter((h) => h.kind === 'leave-sigterm').map((h) => h.unownedMs)),
    gracefulUnownedTotalMs: graceful.reduce((sum, h) => sum + h.unownedMs, 0),
    cuts: cutFigures,
    cutToServedMaxMs: cutFigures.some((c) => c.servedMs === null) ? null : maxOf(cutFigures.map((c) => c.servedMs as number)),
    cutLatency: latency(input, inCut),
    latency: latency(input, () => true),
  };
  return { ...figures, missed: missedTargets(figures, input.targets) };
}

/** When each relay process (by pid) exited. */
function exitsByPid(incarnations: readonly IncarnationRecord[]): Map<number, number> {
  const exits = new Map<number, number>();
  for (const incarnation of incarnations) {
    const pid = incarnation.events.find((e) => e.e === 'start')?.pid;
    if (pid !== undefined && incarnation.exit !== undefined) exits.set(pid, incarnation.exit.t);
  }
  return exits;
}

/**
 * A sample as the relays' processes saw it: a relays row whose process had already exited (a SIGKILL leaves its
 * row live until its lease runs out) serves nothing, so its partitions count as orphaned. The database cannot
 * tell; the harness, which saw the process exit, can.
 */
export function withoutTheDead(sample: OwnershipSample, exits: ReadonlyMap<number, number>): OwnershipSample {
  const dead = (r: SampledRelay) => r.live && (exits.get(r.pid) ?? Number.POSITIVE_INFINITY) <= sample.t;
  if (!sample.relays.some(dead)) return sample;
  const orphaned = sample.relays.filter(dead).reduce((sum, r) => sum + r.held, 0);
  return { ...sample, orphaned: sample.orphaned + orphaned, relays: sample.relays.map((r) => (dead(r) ? { ...r, live: false } : r)) };
}

/**
 * Whether a sample shows the event's own relay where the event puts it: one that joined (or whose broker came
 * back) runs in the group, healthy; one that left holds nothing and no longer counts; a cut one holds nothing.
 */
function targetSettled(event: Event, sample: OwnershipSample): boolean {
  const slot = slotOf(event.target);
  const rows = sample.relays.filter((r) => r.slot === slot);
  switch (event.kind) {
    case 'join':
    case 'broker-back':
      return rows.some((r) => r.live && !r.leaving && !r.trouble);
    case 'leave-sigterm':
    case 'leave-sigkill':
      return rows.every((r) => r.held === 0 && (!r.live || r.leaving));
    case 'broker-cut':
      return rows.every((r) => r.held === 0);
  }
}

/** Joins (incarnations running from the schedule's start), leaves and broker cuts and heals, in time order. */
function handoverEvents(input: FiguresInput): Event[] {
  const events: Event[] = [];
  for (const incarnation of input.incarnations) {
    const running = incarnation.events.find((e) => e.e === 'running');
    if (running !== undefined && running.t >= input.scheduleStart) events.push({ kind: 'join', target: incarnation.name, t: running.t });
  }
  for (const fault of input.faults) {
    if (fault.target === undefined) continue;
    if (fault.kind.startsWith(BROKER_CUT_PREFIX)) {
      events.push({ kind: 'broker-cut', target: fault.target, t: fault.start, cut: fault });
      events.push({ kind: 'broker-back', target: fault.target, t: fault.end });
    } else if (LEAVE.test(fault.kind)) {
      events.push({ kind: fault.kind.includes('sigkill') ? 'leave-sigkill' : 'leave-sigterm', target: fault.target, t: fault.start });
    }
  }
  return events.sort((a, b) => a.t - b.t);
}

/**
 * Time in [from, to] with unowned partitions: each gap between two samples counts when the earlier sample had
 * some (a hand-over shorter than one gap may be missed or counted as a whole gap: the resolution is the gap).
 */
export function unownedTime(samples: readonly OwnershipSample[], from: number, to: number): number {
  let total = 0;
  for (let i = 0; i + 1 < samples.length; i++) {
    const a = samples[i] as OwnershipSample;
    const b = samples[i + 1] as OwnershipSample;
    if (unowned(a) === 0) continue;
    total += Math.max(0, Math.min(b.t, to) - Math.max(a.t, from));
  }
  return total;
}

/**
 * The group as the design wants it: nothing unowned, relays in trouble (or whose broker is cut) hold nothing,
 * and every other live relay that is not leaving holds its fair share (partitions / such relays, rounded either
 * way). When no relay is healthy, shares stay where they are: settled once nothing is unowned.
 */
export function settledSample(sample: OwnershipSample, cutSlots: ReadonlySet<number>): boolean {
  if (unowned(sample) > 0) return false;
  const staying = sample.relays.filter((r) => r.live && !r.leaving);
  const healthy = staying.filter((r) => !r.trouble && !cutSlots.has(r.slot));
  if (healthy.length === 0) return true;
  const share = partitionCount(sample) / healthy.length;
  const troubled = staying.filter((r) => !healthy.includes(r));
  return (
    troubled.every((r) => r.held === 0) &&
    healthy.every((r) => r.held >= Math.floor(share) && r.held <= Math.ceil(share)) &&
    sample.relays.filter((r) => !r.live || r.leaving).every((r) => r.held === 0)
  );
}

function cutFigure(cut: FaultRecord, samples: readonly OwnershipSample[], cutSlots: (t: number) => ReadonlySet<number>, input: FiguresInput): CutFigure {
  const slot = slotOf(cut.target ?? '');
  const victim = (s: OwnershipSample) => s.relays.filter((r) => r.slot === slot && r.live);
  const before = samples.filter((s) => s.t < cut.start).at(-1);
  const during = samples.filter((s) => s.t >= cut.start);
  const since = (t: number | undefined, from: number) => (t === undefined ? null : Math.max(0, t - from));
  const trouble = during.find((s) => s.t <= cut.end && victim(s).some((r) => r.trouble));
  const served = during.find((s) => {
    const down = cutSlots(s.t);
    return unowned(s) === 0 && s.relays.filter((r) => r.held > 0).every((r) => r.live && !down.has(r.slot));
  });
  // until its broker is cut again
  const until = Math.min(
    ...input.faults.filter((f) => f.kind.startsWith(BROKER_CUT_PREFIX) && f.start > cut.start && slotOf(f.target ?? '') === slot).map((f) => f.start),
    Number.POSITIVE_INFINITY,
  );
  const back = samples.find((s) => {
    if (s.t < cut.end || s.t >= until) return false;
    const healthy = s.relays.filter((r) => r.live && !r.leaving && !r.trouble && !cutSlots(s.t).has(r.slot));
    const mine = victim(s).filter((r) => !r.trouble && !r.leaving);
    return healthy.length > 0 && mine.length > 0 && mine.every((r) => r.held >= Math.floor(partitionCount(s) / healthy.length));
  });
  const served0 = served !== undefined && served.t <= cut.end ? served.t : undefined;
  return {
    target: cut.target ?? '?',
    downMs: cut.end - cut.start,
    heldAtCut: before === undefined ? 0 : victim(before).reduce((sum, r) => sum + r.held, 0),
    troubleMs: since(trouble?.t, cut.start),
    servedMs: since(served0, cut.start),
    shareBackMs: since(back?.t, cut.end),
    latency: latency(input, (t) => t >= cut.start && t <= cut.end),
  };
}

/** Commit -> first delivery of the delivered messages whose commit time passes `when`. */
export function latency(input: Pick<FiguresInput, 'commitTimes' | 'firstDelivery'>, when: (committedAt: number) => boolean): LatencyFigures {
  const delays: number[] = [];
  for (const [id, committed] of input.commitTimes) {
    const delivered = input.firstDelivery.get(id);
    if (delivered !== undefined && when(committed)) delays.push(Math.max(0, delivered - committed));
  }
  delays.sort((a, b) => a - b);
  const at = (q: number) => (delays.length === 0 ? 0 : (delays[Math.min(delays.length - 1, Math.ceil(q * delays.length) - 1)] as number));
  return { messages: delays.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: delays.at(-1) ?? 0 };
}

function gaps(samples: readonly OwnershipSample[]): { sampleGapMeanMs: number; sampleGapMaxMs: number } {
  if (samples.length < 2) return { sampleGapMeanMs: 0, sampleGapMaxMs: 0 };
  let max = 0;
  for (let i = 1; i < samples.length; i++) max = Math.max(max, (samples[i] as OwnershipSample).t - (samples[i - 1] as OwnershipSample).t);
  return {
    sampleGapMeanMs: Math.round((((samples.at(-1) as OwnershipSample).t - (samples[0] as OwnershipSample).t) / (samples.length - 1)) * 10) / 10,
    sampleGapMaxMs: max,
  };
}

function missedTargets(f: Omit<OwnershipFigures, 'missed'>, targets: OwnershipTargets): string[] {
  const missed: string[] = [];
  const over = (name: string, value: number | null, bound: number | undefined) => {
    if (bound === undefined) return;
    if (value === null) missed.push(`${name} not measured (bound ${bound})`);
    else if (value > bound) missed.push(`${name} ${value} > ${bound}`);
  };
  if (targets.maxHandoverUnownedMs !== undefined) {
    over('join unowned ms', f.joinUnownedMaxMs, targets.maxHandoverUnownedMs);
    over('graceful leave unowned ms', f.leaveUnownedMaxMs, targets.maxHandoverUnownedMs);
  }
  if (targets.maxCutToServedMs !== undefined) {
    if (f.cuts.length === 0) missed.push('no broker cut measured');
    for (const cut of f.cuts) over(`cut of ${cut.target}: served after ms`, cut.servedMs, targets.maxCutToServedMs);
  }
  over('p99 ms of messages committed during the cuts', f.cutLatency.messages === 0 ? null : f.cutLatency.p99Ms, targets.maxCutLatencyP99Ms);
  return missed;
}
