import { DEFAULT_WORKLOAD, type RelaySpec, type WorkloadSpec } from './spec.js';

/**
 * How hard the writers push. `light`: a few hundred messages in 10-20 s, the ci set's load (inside
 * `npm test`). `sustained`: more than 10,000 committed messages at 500-750 msg/s, so that every fault
 * hits a busy engine; the full set's default.
 */
export type LoadName = 'light' | 'sustained';

export const LOAD_NAMES: readonly LoadName[] = ['light', 'sustained'];

/** A load: what the writers do, and what the relays need to keep up with it. */
export interface Load {
  readonly workload: WorkloadSpec;
  readonly relay: Partial<RelaySpec>;
}

/**
 * Sustained: 2 writers x 16 lanes on a fixed schedule (2 x 3200 transactions of 1-3 messages, 10 % rolled
 * back: about 11,500 committed). Lanes spend most of their time waiting, not working: a transaction held
 * open 1-2.5 s stalls its lane and every lane that picks its key. Measured on the 2-core machine: 12 lanes,
 * 256 keys and 1 % held reached only 520-540 msg/s of 750 asked; 16 lanes, 512 keys and 0.5 % held (still
 * about 30 late commits a run) reach 700 when the machine is otherwise idle.
 * The relays read 100 a lane instead of 20: a relay of the older engine delivered 200-300 msg/s with batches of 20 here, so
 * one relay alone (`rabbit-relays-join-leave`) fell behind and every message waited in a growing backlog.
 */
export const LOADS: Readonly<Record<LoadName, Load>> = Object.freeze({
  light: Object.freeze({ workload: DEFAULT_WORKLOAD, relay: {} }),
  sustained: Object.freeze({
    workload: Object.freeze({
      ...DEFAULT_WORKLOAD,
      lanes: 16,
      txnsPerWriter: 3200,
      keys: 512,
      longOpenShare: 0.005,
      paceMs: [0, 0] as const,
      ratePerSecond: 750,
    }),
    relay: Object.freeze({ batchSize: 100, maxInFlight: 64 }),
  }),
});

export function parseLoad(value: string): LoadName {
  const load = LOAD_NAMES.find((name) => name === value);
  if (load === undefined) throw new Error(`--load must be ${LOAD_NAMES.join(' or ')}; got ${value}`);
  return load;
}

/** Committed messages a transaction carries on average: 1..max messages, rollbacks excluded. */
export function meanCommittedPerTransaction(workload: WorkloadSpec): number {
  return ((1 + workload.maxMessagesPerTxn) / 2) * (1 - workload.rollbackShare);
}

/** The gap between two transaction starts of one lane that makes all lanes together reach `ratePerSecond`. */
export function laneIntervalMs(workload: WorkloadSpec): number | null {
  if (workload.ratePerSecond === null) return null;
  const lanes = workload.writers * workload.lanes;
  return (1000 * lanes * meanCommittedPerTransaction(workload)) / workload.ratePerSecond;
}
