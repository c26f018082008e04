import type { FaultRecord } from './fault-log.js';
import type { RelaySpec } from './spec.js';

export interface DelayRow {
  readonly id: string;
  readonly key: string;
  readonly version: number;
}

export interface DelayInput {
  readonly ledger: readonly DelayRow[];
  readonly commitTimes: ReadonlyMap<string, number>;
  /** The first delivery of each id. */
  readonly firstDelivery: ReadonlyMap<string, number>;
  /** When a row that was never delivered was parked dead. */
  readonly deadAt: (id: string) => number | null | undefined;
  readonly faults: readonly FaultRecord[];
  readonly relay: RelaySpec;
}

export interface Delays {
  readonly maxUnpublishedAgeMs: number;
  readonly stuckBoundMs: number;
  readonly maxExcessMs: number;
  readonly stuck: readonly string[];
}

/** How long a message may wait once it could go: a lease, a poll, two publish timeouts, the backoffs. */
export function stuckBound(relay: RelaySpec): number {
  return relay.leaseMs + relay.maxPollIntervalMs + 2 * relay.publishTimeoutMs + relay.maxErrorBackoffMs + 2 * relay.retryMaxMs + 500;
}

/**
 * Delay of each delivered message from when it could go to its first delivery. It could go once it was
 * committed, its key's previous message was delivered or parked, the last fault that began before its
 * delivery healed (a row lock excuses only its own keys), and every message committed before it was
 * delivered or parked: under sustained load, a message that queues behind a backlog the relays are still
 * working off is late, not stuck. Stuck is a message left behind while what came before it went.
 * Messages of keys a row lock held do not excuse others: every other key must flow past a lock.
 */
export function measureDelays(input: DelayInput): Delays {
  const resolvedAt = (id: string): number | undefined => input.firstDelivery.get(id) ?? input.deadAt(id) ?? undefined;
  const bound = stuckBound(input.relay);
  const cleared = backlogCleared(input, resolvedAt);
  const byKey = new Map<string, DelayRow[]>();
  for (const row of input.ledger) {
    const rows = byKey.get(row.key);
    if (rows === undefined) byKey.set(row.key, [row]);
    else rows.push(row);
  }
  let maxAge = 0;
  let maxExcess = 0;
  const stuck: string[] = [];
  for (const rows of byKey.values()) {
    rows.sort((a, b) => a.version - b.version);
    rows.forEach((row, index) => {
      const delivered = input.firstDelivery.get(row.id);
      const committed = input.commitTimes.get(row.id);
      if (delivered === undefined || committed === undefined) return;
      maxAge = Math.max(maxAge, delivered - committed);
      const previous = index > 0 ? (resolvedAt((rows[index - 1] as DelayRow).id) ?? 0) : 0;
      const healed = input.faults
        .filter((f) => f.start <= delivered && (f.keys === undefined || f.keys.includes(row.key)))
        .reduce((latest, f) => Math.max(latest, f.end), 0);
      const excess = delivered - Math.max(committed, previous, healed, cleared.get(row.id) ?? 0);
      maxExcess = Math.max(maxExcess, excess);
      if (excess > bound && stuck.length < 1000) stuck.push(`${row.key} v${row.version} ${row.id} waited ${excess} ms`);
    });
  }
  return { maxUnpublishedAgeMs: maxAge, stuckBoundMs: bound, maxExcessMs: maxExcess, stuck };
}

/** For each row: when the last message committed before it (in an earlier transaction) was delivered or parked. */
function backlogCleared(input: DelayInput, resolvedAt: (id: string) => number | undefined): Map<string, number> {
  const locked = new Set(input.faults.flatMap((f) => f.keys ?? []));
  const commit = (row: DelayRow) => input.commitTimes.get(row.id) ?? 0;
  const rows = input.ledger.filter((row) => input.commitTimes.has(row.id)).sort((a, b) => commit(a) - commit(b));
  const cleared = new Map<string, number>();
  let latest = 0;
  for (let i = 0; i < rows.length;) {
    const t = commit(rows[i] as DelayRow);
    let j = i;
    for (; j < rows.length && commit(rows[j] as DelayRow) === t; j++) cleared.set((rows[j] as DelayRow).id, latest);
    for (let k = i; k < j; k++) {
      const row = rows[k] as DelayRow;
      if (!locked.has(row.key)) latest = Math.max(latest, resolvedAt(row.id) ?? 0);
    }
    i = j;
  }
  return cleared;
}
