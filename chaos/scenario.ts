import type { Environment } from './environment.js';
import type { FaultLog } from './fault-log.js';
import type { Prng } from './prng.js';
import type { RelaySlot } from './relay-slot.js';
import type { BrokerKind, RelayConfig, RelaySpec, WorkloadSpec } from './spec.js';

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
  readonly workload?: Partial<WorkloadSpec>;
  readonly relay?: Partial<RelaySpec>;
  /** Named kill points: which incarnation of which relay kills itself where. */
  readonly killPlan?: (prng: Prng, slot: number, incarnation: number) => RelayConfig['killPoint'];
  /** The fault schedule; resolves once every fault it injected has healed. */
  readonly faults: (ctx: FaultContext) => Promise<void>;
}
