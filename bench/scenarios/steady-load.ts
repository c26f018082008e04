import type { ScenarioContext, ScenarioResult } from './scenario.js';

export async function steadyLoad(_context: ScenarioContext): Promise<ScenarioResult> {
  throw new Error('not yet');
}
