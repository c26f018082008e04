import type { ScenarioReport } from './checker.js';

const COLUMNS: readonly [string, (r: ScenarioReport) => string][] = [
  ['scenario', (r) => r.scenario],
  ['seed', (r) => String(r.seed)],
  ['committed', (r) => String(r.committed)],
  ['msg/s', (r) => String(r.committedPerSecond)],
  ['wfail', (r) => String(r.writerFailures)],
  ['lost', (r) => String(r.lost)],
  ['phantom', (r) => String(r.phantom)],
  ['dups', (r) => String(r.duplicates)],
  ['unattrib', (r) => String(r.duplicatesUnattributed)],
  ['inversions', (r) => String(r.orderInversions)],
  ['stuck', (r) => String(r.stuck)],
  ['maxAge ms', (r) => String(r.maxUnpublishedAgeMs)],
  ['drain ms', (r) => (r.drainMs === null ? 'NEVER' : String(r.drainMs))],
  ['canary', (r) => String(r.canaryLeaks.length)],
  ['faults', (r) => String(r.faults.length)],
  ['relays', (r) => String(r.relaysPeak)],
  ['fenced', (r) => String(r.fencedWrites)],
  ['s', (r) => String(Math.round(r.durationMs / 1000))],
  ['result', (r) => (r.pass ? 'PASS' : 'FAIL')],
];

/** A readable table of the scenario reports, one line each, then the duplicates by fault. */
export function formatSummary(reports: readonly ScenarioReport[]): string {
  const rows = reports.map((r) => COLUMNS.map(([, cell]) => cell(r)));
  const widths = COLUMNS.map(([title], i) => Math.max(title.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  const out = [line(COLUMNS.map(([title]) => title)), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)];
  for (const r of reports) {
    const attributed = Object.entries(r.duplicatesByFault).map(([fault, n]) => `${fault}=${n}`).join(', ');
    out.push(`${r.scenario}: duplicates by fault: ${attributed || 'none'}; redeliveries by the broker: ${r.brokerRedeliveries}`);
    for (const [what, samples] of Object.entries(r.samples)) if (samples.length > 0) out.push(`  ${what}: ${samples.join('; ')}`);
    if (r.faultsOverBudget.length > 0) out.push(`  over budget: ${r.faultsOverBudget.join('; ')}`);
    if (r.canaryLeaks.length > 0) out.push(`  CANARY LEAKED in: ${r.canaryLeaks.join(', ')}`);
  }
  return `${out.join('\n')}\n`;
}
