import type { Scenario, ScenarioSet } from '../scenario.js';
import { rabbitSigkillRandom } from './rabbit-sigkill-random.js';

/** Every scenario, in the order the sets run them. */
export const scenarios: readonly Scenario[] = [rabbitSigkillRandom];

export function scenariosFor(set: ScenarioSet, name: string): Scenario[] {
  if (name !== 'all') {
    const found = scenarios.find((s) => s.name === name);
    if (found === undefined) throw new Error(`no scenario named ${name}; known: ${scenarios.map((s) => s.name).join(', ')}`);
    return [found];
  }
  return scenarios.filter((s) => s.sets.includes(set));
}
