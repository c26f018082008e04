import { LOADS, type LoadName } from './load.js';
import type { Scenario } from './scenario.js';
import { DEFAULT_RELAY, type RelayEngine, type RelaySpec, type WorkloadSpec } from './spec.js';

/**
 * What a scenario runs with: the load's workload with the scenario's changes, and the relay defaults with
 * the load's and the scenario's changes, and the engine.
 */
export function resolveSpecs(
  scenario: Pick<Scenario, 'workload' | 'relay'>,
  load: LoadName,
  engine: RelayEngine,
): { workload: WorkloadSpec; relay: RelaySpec } {
  const base = LOADS[load];
  const changes = typeof scenario.workload === 'function' ? scenario.workload(base.workload) : scenario.workload;
  return {
    workload: { ...base.workload, ...changes },
    relay: { ...DEFAULT_RELAY, ...base.relay, ...scenario.relay, engine },
  };
}
