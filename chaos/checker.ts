import { attributeDuplicates, duplicateBudget, type IncarnationRecord, indexSends } from './attribution.js';
import { measureDelays } from './delays.js';
import type { FaultRecord } from './fault-log.js';
import type { LoadName } from './load.js';
import type { OwnershipFigures } from './ownership-figures.js';
import { relayActivity } from './relay-activity.js';
import type { MessageKind, RelayEngine, RelaySpec } from './spec.js';

export interface LedgerRow { readonly id: string; readonly key: string; readonly version: number; readonly kind: MessageKind }
export interface OutboxRow { readonly id: string; readonly state: string; readonly deadAt: number | null }
export interface Delivery { readonly t: number; readonly id: string; readonly r: boolean }

export interface CheckInput {
  readonly scenario: string;
  readonly seed: number;
  readonly relay: RelaySpec;
  /** Committed rows: the truth. */
  readonly ledger: readonly LedgerRow[];
  /** Outbox rows left at the end (published rows are deleted). */
  readonly outbox: readonly OutboxRow[];
  readonly commitTimes: ReadonlyMap<string, number>;
  readonly deliveries: readonly Delivery[];
  readonly incarnations: readonly IncarnationRecord[];
  readonly faults: readonly FaultRecord[];
  readonly drainMs: number | null;
  readonly canaryLeaks: readonly string[];
  /** Writer transactions that failed for a reason other than a planned rollback (writers are not under fault). */
  readonly writerFailures: number;
}

export interface CheckReport {
  readonly scenario: string;
  readonly seed: number;
  readonly committed: number;
  /** From the first commit to the last. */
  readonly writeMs: number;
  /** Committed messages per second over `writeMs`: the load the faults hit. */
  readonly committedPerSecond: number;
  readonly writerFailures: number;
  readonly delivered: number;
  readonly lost: number;
  readonly phantom: number;
  readonly duplicates: number;
  readonly duplicatesAttributed: number;
  readonly duplicatesUnattributed: number;
  readonly duplicatesByFault: Record<string, number>;
  readonly faultsOverBudget: string[];
  readonly brokerRedeliveries: number;
  readonly orderInversions: number;
  readonly poisonNotDead: number;
  readonly normalDead: number;
  readonly leftPending: number;
  readonly maxUnpublishedAgeMs: number;
  readonly stuck: number;
  readonly stuckBoundMs: number;
  readonly maxExcessMs: number;
  readonly drainMs: number | null;
  readonly canaryLeaks: readonly string[];
  readonly faults: readonly FaultRecord[];
  readonly relayIncarnations: number;
  readonly relaysPeak: number;
  /** Relay writes that changed fewer rows than asked (fenced). */
  readonly fencedWrites: number;
  readonly samples: Record<string, readonly string[]>;
  readonly pass: boolean;
}

/** A check's report with how the scenario ran. */
export interface ScenarioReport extends CheckReport {
  readonly load: LoadName;
  readonly engine: RelayEngine;
  /** Start of the scenario to its report, environment set-up and drain included. */
  readonly durationMs: number;
  /** Hand-over, broker-cut and latency figures, for scenarios that sample partition ownership. */
  readonly ownership?: OwnershipFigures;
}

/** Faults that restart the broker: acks in flight may be lost and the broker delivers again. */
const BROKER_RESTARTS = /^(nats-server-restart|rabbitmq-stop-start-app)/;
const ACK_WINDOW_MS = 2000;

const isPoison = (kind: MessageKind) => kind === 'poison-large';

/** Counts, never reads logs: committed rows against deliveries, with duplicates attributed to faults. */
export function check(input: CheckInput): CheckReport {
  const { relay } = input;
  const ledger = new Map(input.ledger.map((row) => [row.id, row]));
  const outbox = new Map(input.outbox.map((row) => [row.id, row]));
  const first = new Map<string, number>();
  const publishCopies = new Map<string, number>();
  const phantoms = new Set<string>();
  let redeliveries = 0;
  let inversions = 0;
  const inversionSamples: string[] = [];
  const highest = new Map<string, number>();
  const brokerRestarts = input.faults.filter((f) => BROKER_RESTARTS.test(f.kind));
  for (const d of input.deliveries) {
    const row = ledger.get(d.id);
    if (row === undefined) {
      phantoms.add(d.id);
      continue;
    }
    const firstAt = first.get(d.id);
    if (firstAt !== undefined) {
      // A copy the broker sent again (flagged, or because a restart lost the consumer's ack) is not a publish.
      if (d.r || brokerRestarts.some((f) => f.start >= firstAt - ACK_WINDOW_MS && f.start <= d.t)) redeliveries++;
      else publishCopies.set(d.id, (publishCopies.get(d.id) ?? 0) + 1);
      continue;
    }
    first.set(d.id, d.t);
    const top = highest.get(row.key) ?? 0;
    if (row.version < top) {
      inversions++;
      if (inversionSamples.length < 5) inversionSamples.push(`${row.key} v${row.version} after v${top} (${d.id})`);
    } else highest.set(row.key, row.version);
  }
  const lost = input.ledger.filter((row) => !isPoison(row.kind) && !first.has(row.id));
  const poisonNotDead = input.ledger.filter((row) => isPoison(row.kind) && outbox.get(row.id)?.state !== 'dead');
  const normalDead = input.ledger.filter((row) => !isPoison(row.kind) && outbox.get(row.id)?.state === 'dead');
  const leftPending = input.outbox.filter((row) => row.state === 'pending').length;

  const attribution = attributeDuplicates(publishCopies, indexSends(input.incarnations), input.faults, relay.leaseMs);
  const byFault: Record<string, number> = {};
  const overBudget: string[] = [];
  for (const fault of input.faults) {
    const copies = attribution.byFault.get(fault.id) ?? 0;
    if (copies === 0) continue;
    byFault[`${fault.id}:${fault.kind}`] = copies;
    const budget = duplicateBudget(fault, relay);
    if (copies > budget) overBudget.push(`${fault.id}:${fault.kind} ${copies} > ${budget}`);
  }

  const delays = measureDelays({
    ledger: input.ledger,
    commitTimes: input.commitTimes,
    firstDelivery: first,
    deadAt: (id) => outbox.get(id)?.deadAt,
    faults: input.faults,
    relay,
  });
  const report = {
    scenario: input.scenario,
    seed: input.seed,
    committed: input.ledger.length,
    ...writeRate(input.ledger.length, input.commitTimes),
    writerFailures: input.writerFailures,
    delivered: first.size,
    lost: lost.length,
    phantom: phantoms.size,
    duplicates: attribution.copies,
    duplicatesAttributed: attribution.attributed,
    duplicatesUnattributed: attribution.copies - attribution.attributed,
    duplicatesByFault: byFault,
    faultsOverBudget: overBudget,
    brokerRedeliveries: redeliveries,
    orderInversions: inversions,
    poisonNotDead: poisonNotDead.length,
    normalDead: normalDead.length,
    leftPending,
    maxUnpublishedAgeMs: delays.maxUnpublishedAgeMs,
    stuck: delays.stuck.length,
    stuckBoundMs: delays.stuckBoundMs,
    maxExcessMs: delays.maxExcessMs,
    drainMs: input.drainMs,
    canaryLeaks: input.canaryLeaks,
    faults: input.faults,
    relayIncarnations: input.incarnations.length,
    ...relayActivity(input.incarnations),
    samples: {
      lost: lost.slice(0, 10).map((r) => `${r.key} v${r.version} ${r.kind} ${r.id}`),
      phantom: [...phantoms].slice(0, 10),
      unattributed: attribution.unattributed.slice(0, 10).map((u) => `${u.id} x${u.copies}`),
      inversions: inversionSamples,
      stuck: delays.stuck.slice(0, 10),
      poisonNotDead: poisonNotDead.slice(0, 10).map((r) => `${r.kind} ${r.id} ${outbox.get(r.id)?.state ?? 'gone'}`),
      normalDead: normalDead.slice(0, 10).map((r) => r.id),
    },
  };
  return { ...report, pass: passes(report) };
}

export function passes(r: Omit<CheckReport, 'pass'>): boolean {
  return r.committed > 0 && r.writerFailures === 0 && r.lost === 0 && r.phantom === 0 && r.orderInversions === 0 && r.duplicatesUnattributed === 0 && r.faultsOverBudget.length === 0
    && r.poisonNotDead === 0 && r.normalDead === 0 && r.leftPending === 0 && r.stuck === 0 && r.drainMs !== null && r.canaryLeaks.length === 0;
}

function writeRate(committed: number, commitTimes: ReadonlyMap<string, number>): { writeMs: number; committedPerSecond: number } {
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (const t of commitTimes.values()) {
    first = Math.min(first, t);
    last = Math.max(last, t);
  }
  const writeMs = last > first ? last - first : 0;
  return { writeMs, committedPerSecond: writeMs > 0 ? Math.round((committed * 1000) / writeMs) : 0 };
}
