import type { Environment } from './environment.js';
import type { FanOutTargets } from './fan-out-figures.js';
import type { FaultLog } from './fault-log.js';
import type { OwnershipTargets } from './ownership-figures.js';
import type { Prng } from './prng.js';
import type { RelaySlot } from './relay-slot.js';
import type { BrokerKind, DestinationSpec, RelayConfig, RelaySpec, WorkloadSpec } from './spec.js';

export type ScenarioSet = 'ci' | 'full';

/** What a fault schedule can reach. */
export interface FaultContext {
  readonly prng: Prng;
  readonly env: Environment;
  readonly slots: readonly RelaySlot[];
  readonly log: FaultLog;
  readonly relay: RelaySpec;
  /** True while writers are still writing: schedules inject faults into live traffic. */
  writing(): boolean;
  /** A scheduled delay (the schedule itself may wait; checks never do). */
  sleep(ms: number): Promise<void>;
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly broker: BrokerKind;
  readonly sets: readonly ScenarioSet[];
  /** Changes to the load's workload; a function when they depend on it (`base` is the load's). */
  readonly workload?: Partial<WorkloadSpec> | ((base: WorkloadSpec) => Partial<WorkloadSpec>);
  readonly relay?: Partial<RelaySpec>;
  /** How many of the `relay.count` slots start with the scenario (default all); the schedule joins the rest. */
  readonly initialRelays?: number;
  /**
   * Each relay slot reaches the database through a proxy of its own (in front of the shared one, so that
   * shared faults still hit it): a schedule can cut one relay off while the others run.
   */
  readonly privateDatabaseProxies?: boolean;
  /**
   * Each relay slot reaches the broker through a proxy of its own (in front of the shared one, so that shared
   * broker faults still hit it): a schedule can cut one relay's broker off while the others keep theirs.
   */
  readonly privateBrokerProxies?: boolean;
  /**
   * Sample the partitions and relays tables while the scenario runs (`chaos/ownership-sampler.ts`) and report
   * hand-over, broker-cut and latency figures (`chaos/ownership-figures.ts`); the targets given are part of the
   * verdict. A function when they depend on the relays' settings.
   */
  readonly ownership?: OwnershipTargets | ((relay: RelaySpec) => OwnershipTargets);
  /**
   * Fan-out (docs/fan-out.md): the writers' outbox routes every topic to `default` (the scenario's `broker`) and
   * these destinations, one row each; every relay has them all, each behind a proxy of its own; the consumer reads
   * every destination, and the checker counts per destination. With `targets`, the report's `fanOut` figures
   * (latency per destination inside and outside a destination's outage) are part of the verdict.
   */
  readonly fanOut?: { readonly destinations: readonly DestinationSpec[]; readonly targets?: FanOutTargets };
  /** Named kill points: which incarnation of which relay kills itself where. */
  readonly killPlan?: (prng: Prng, slot: number, incarnation: number) => RelayConfig['killPoint'];
  /** The fault schedule; resolves once every fault it injected has healed. */
  readonly faults: (ctx: FaultContext) => Promise<void>;
}
