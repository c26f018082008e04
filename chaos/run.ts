/**
 * `npm run chaos -- --seed N --scenario NAME|all --set ci|full --load light|sustained --engine v2 --out DIR`:
 * runs fault-injection scenarios against the local PostgreSQL, RabbitMQ and NATS, writes
 * DIR/<scenario>-<seed>/report.json and prints a table. Exit 0 only if every scenario met every target.
 * The same seed replays the same schedule. The load defaults to `light` for the ci set, `sustained` for full.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ScenarioReport } from './checker.js';
import { parseLoad } from './load.js';
import { runScenario } from './run-scenario.js';
import type { ScenarioSet } from './scenario.js';
import { scenariosFor } from './scenarios/index.js';
import { formatSummary } from './summary.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    scenario: { type: 'string', default: 'all' },
    set: { type: 'string', default: 'ci' },
    load: { type: 'string' },
    engine: { type: 'string', default: 'v2' },
    out: { type: 'string', default: '.chaos' },
  },
});
const seed = Number(values.seed);
if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`--seed must be a whole number; got ${values.seed}`);
if (values.set !== 'ci' && values.set !== 'full') throw new Error(`--set must be ci or full; got ${values.set}`);
const set: ScenarioSet = values.set;
const load = parseLoad(values.load ?? (set === 'full' ? 'sustained' : 'light'));
if (values.engine !== 'v2') throw new Error(`--engine must be v2 (engine v1 was removed); got ${values.engine}`);
const engine = values.engine;
const out = resolve(values.out);
mkdirSync(out, { recursive: true });

const reports: ScenarioReport[] = [];
for (const scenario of scenariosFor(set, values.scenario)) {
  const started = Date.now();
  process.stdout.write(`chaos: ${scenario.name} (seed ${seed}, ${load} load, engine ${engine}): ${scenario.description}\n`);
  const report = await runScenario(scenario, seed, out, { load, engine });
  reports.push(report);
  process.stdout.write(`chaos: ${scenario.name} ${report.pass ? 'PASS' : 'FAIL'} in ${Math.round((Date.now() - started) / 1000)} s\n`);
}
const summary = formatSummary(reports);
writeFileSync(join(out, `summary-${set}-${seed}.json`), `${JSON.stringify(reports, null, 2)}\n`);
writeFileSync(join(out, `summary-${set}-${seed}.txt`), summary);
process.stdout.write(summary);
process.exitCode = reports.every((r) => r.pass) ? 0 : 1;
