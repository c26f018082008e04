import type { ScenarioContext, ScenarioResult } from './scenario.js';

export async function claimScaling(_context: ScenarioContext): Promise<ScenarioResult> {
  throw new Error('not yet');
}
