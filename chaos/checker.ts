import { attributeDuplicates, duplicateBudget, type IncarnationRecord, indexSends } from './attribution.js';
import { measureDelays, stuckBound } from './delays.js';
import { type FaultRecord, hitsDestination } from './fault-log.js';
import type { FanOutFigures } from './fan-out-figures.js';
import type { LoadName } from './load.js';
import type { OwnershipFigures } from './ownership-figures.js';
import { relayActivity } from './relay-activity.js';
import { DEFAULT_DESTINATION, type MessageKind, type RelayEngine, type RelaySpec } from './spec.js';

/** One committed outbox row; with fan-out an event has one per destination, each with its own id. */
export interface LedgerRow {
  readonly id: string;
  readonly key: string;
  readonly version: number;
  readonly kind: MessageKind;
  readonly destination?: string;
}
export interface OutboxRow {
  readonly id: string;
  readonly state: string;
  readonly deadAt: number | null;
}
/** A delivery the consumer got; `to`: the destination it came from (absent: `default`). */
export interface Delivery {
  readonly t: number;
  readonly id: string;
  readonly r: boolean;
  readonly to?: string;
}

/** The verdict's counts for one destination (fan-out scenarios). */
export interface DestinationCounts {
  readonly committed: number;
  readonly delivered: number;
  readonly lost: number;
  /** Deliveries at this destination of an id never committed for it (rolled back, unknown, or another destination's). */
  readonly phantom: number;
  readonly duplicates: number;
  readonly duplicatesUnattributed: number;
  readonly brokerRedeliveries: number;
  readonly orderInversions: number;
  readonly poisonNotDead: number;
  readonly normalDead: number;
  readonly maxUnpublishedAgeMs: number;
  readonly stuck: number;
}

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
  /** Fan-out: every destination of the scenario, `default` first; the report then counts per destination too. */
  readonly destinations?: readonly string[];
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
  /** Fan-out scenarios: the counts of each destination (order, loss and copies are per key and destination). */
  readonly byDestination?: Record<string, DestinationCounts>;
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
  /** Latency per destination inside and outside a destination's outage, for fan-out scenarios. */
  readonly fanOut?: FanOutFigures;
}

/** Faults that restart the broker: acks in flight may be lost and the broker delivers again. */
const BROKER_RESTARTS = /^(nats-server-restart|rabbitmq-stop-start-app)/;
const ACK_WINDOW_MS = 2000;

const isPoison = (kind: MessageKind) => kind === 'poison-large';

const destinationOfRow = (row: Pick<LedgerRow, 'destination'>): string => row.destination ?? DEFAULT_DESTINATION;

/**
 * Counts, never reads logs: committed rows against deliveries, with duplicates attributed to faults. With fan-out,
 * every row is checked at its own destination: delivered there (a delivery at another destination is a phantom),
 * in order per key and destination, its copies explained by faults that hit that destination.
 */
export function check(input: CheckInput): CheckReport {
  const { relay } = input;
  const ledger = new Map(input.ledger.map((row) => [row.id, row]));
  const outbox = new Map(input.outbox.map((row) => [row.id, row]));
  const destinationOf = (id: string): string => destinationOfRow(ledger.get(id) ?? {});
  const first = new Map<string, number>();
  const publishCopies = new Map<string, number>();
  const phantoms = new Set<string>();
  const phantomsAt = new Map<string, Set<string>>();
  const redeliveriesAt = new Map<string, number>();
  const inversionsAt = new Map<string, number>();
  let redeliveries = 0;
  let inversions = 0;
  const inversionSamples: string[] = [];
  const highest = new Map<string, number>();
  const brokerRestarts = input.faults.filter((f) => BROKER_RESTARTS.test(f.kind));
  const bump = (counts: Map<string, number>, at: string) => counts.set(at, (counts.get(at) ?? 0) + 1);
  for (const d of input.deliveries) {
    const at = d.to ?? DEFAULT_DESTINATION;
    const row = ledger.get(d.id);
    if (row === undefined || destinationOfRow(row) !== at) {
      const phantom = row === undefined ? d.id : `${d.id} (at ${at}, stored for ${destinationOfRow(row)})`;
      phantoms.add(phantom);
      phantomsAt.set(at, (phantomsAt.get(at) ?? new Set()).add(phantom));
      continue;
    }
    const firstAt = first.get(d.id);
    if (firstAt !== undefined) {
      // A copy the broker sent again (flagged, or because a restart lost the consumer's ack) is not a publish.
      if (d.r || brokerRestarts.some((f) => hitsDestination(f, at) && f.start >= firstAt - ACK_WINDOW_MS && f.start <= d.t)) {
        redeliveries++;
        bump(redeliveriesAt, at);
      } else publishCopies.set(d.id, (publishCopies.get(d.id) ?? 0) + 1);
      continue;
    }
    first.set(d.id, d.t);
    // order holds per key and destination
    const orderKey = `${at}\u0000${row.key}`;
    const top = highest.get(orderKey) ?? 0;
    if (row.version < top) {
      inversions++;
      bump(inversionsAt, at);
      if (inversionSamples.length < 5)
        inversionSamples.push(`${row.key} v${row.version} after v${top}${at === DEFAULT_DESTINATION ? '' : ` at ${at}`} (${d.id})`);
    } else highest.set(orderKey, row.version);
  }
  const lost = input.ledger.filter((row) => !isPoison(row.kind) && !first.has(row.id));
  const poisonNotDead = input.ledger.filter((row) => isPoison(row.kind) && outbox.get(row.id)?.state !== 'dead');
  const normalDead = input.ledger.filter((row) => !isPoison(row.kind) && outbox.get(row.id)?.state === 'dead');
  const leftPending = input.outbox.filter((row) => row.state === 'pending').length;

  const attribution = attributeDuplicates(publishCopies, indexSends(input.incarnations), input.faults, relay.leaseMs, destinationOf);
  const byFault: Record<string, number> = {};
  const overBudget: string[] = [];
  for (const fault of input.faults) {
    const copies = attribution.byFault.get(fault.id) ?? 0;
    if (copies === 0) continue;
    byFault[`${fault.id}:${fault.kind}`] = copies;
    const budget = duplicateBudget(fault, relay);
    if (copies > budget) overBudget.push(`${fault.id}:${fault.kind} ${copies} > ${budget}`);
  }

  // each destination's rows wait for their own destination's faults and backlog only
  const names = input.destinations ?? [DEFAULT_DESTINATION];
  const delaysAt = new Map(
    names.map((name) => [
      name,
      measureDelays({
        ledger: input.ledger.filter((row) => destinationOfRow(row) === name),
        commitTimes: input.commitTimes,
        firstDelivery: first,
        deadAt: (id) => outbox.get(id)?.deadAt,
        faults: input.faults.filter((f) => hitsDestination(f, name)),
        relay,
      }),
    ]),
  );
  const delays = [...delaysAt.values()];
  const stuck = delays.flatMap((d) => d.stuck);
  const byDestination =
    input.destinations === undefined
      ? undefined
      : Object.fromEntries(
          names.map((name): [string, DestinationCounts] => {
            const here = (rows: readonly LedgerRow[]) => rows.filter((row) => destinationOfRow(row) === name).length;
            const copiesHere = [...publishCopies].filter(([id]) => destinationOf(id) === name).reduce((sum, [, n]) => sum + n, 0);
            const unattributedHere = attribution.unattributed.filter((u) => destinationOf(u.id) === name).reduce((sum, u) => sum + u.copies, 0);
            const delaysHere = delaysAt.get(name);
            return [
              name,
              {
                committed: here(input.ledger),
                delivered: [...first.keys()].filter((id) => destinationOf(id) === name).length,
                lost: here(lost),
                phantom: phantomsAt.get(name)?.size ?? 0,
                duplicates: copiesHere,
                duplicatesUnattributed: unattributedHere,
                brokerRedeliveries: redeliveriesAt.get(name) ?? 0,
                orderInversions: inversionsAt.get(name) ?? 0,
                poisonNotDead: here(poisonNotDead),
                normalDead: here(normalDead),
                maxUnpublishedAgeMs: delaysHere?.maxUnpublishedAgeMs ?? 0,
                stuck: delaysHere?.stuck.length ?? 0,
              },
            ];
          }),
        );
  const withDestination = (row: LedgerRow) => (destinationOfRow(row) === DEFAULT_DESTINATION ? '' : ` @${destinationOfRow(row)}`);
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
    maxUnpublishedAgeMs: Math.max(0, ...delays.map((d) => d.maxUnpublishedAgeMs)),
    stuck: stuck.length,
    stuckBoundMs: stuckBound(relay),
    maxExcessMs: Math.max(0, ...delays.map((d) => d.maxExcessMs)),
    drainMs: input.drainMs,
    canaryLeaks: input.canaryLeaks,
    faults: input.faults,
    relayIncarnations: input.incarnations.length,
    ...relayActivity(input.incarnations),
    ...(byDestination === undefined ? {} : { byDestination }),
    samples: {
      lost: lost.slice(0, 10).map((r) => `${r.key} v${r.version} ${r.kind}${withDestination(r)} ${r.id}`),
      phantom: [...phantoms].slice(0, 10),
      unattributed: attribution.unattributed.slice(0, 10).map((u) => `${u.id} x${u.copies}`),
      inversions: inversionSamples,
      stuck: stuck.slice(0, 10),
      poisonNotDead: poisonNotDead.slice(0, 10).map((r) => `${r.kind} ${r.id} ${outbox.get(r.id)?.state ?? 'gone'}`),
      normalDead: normalDead.slice(0, 10).map((r) => r.id),
    },
  };
  return { ...report, pass: passes(report) };
}

export function passes(r: Omit<CheckReport, 'pass'>): boolean {
  return (
    r.committed > 0 &&
    r.writerFailures === 0 &&
    r.lost === 0 &&
    r.phantom === 0 &&
    r.orderInversions === 0 &&
    r.duplicatesUnattributed === 0 &&
    r.faultsOverBudget.length === 0 &&
    r.poisonNotDead === 0 &&
    r.normalDead === 0 &&
    r.leftPending === 0 &&
    r.stuck === 0 &&
    r.drainMs !== null &&
    r.canaryLeaks.length === 0
  );
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
