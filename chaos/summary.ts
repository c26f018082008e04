import type { ScenarioReport } from './checker.js';
import type { FanOutFigures } from './fan-out-figures.js';
import type { LatencyFigures, OwnershipFigures } from './ownership-figures.js';

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
    const attributed = Object.entries(r.duplicatesByFault)
      .map(([fault, n]) => `${fault}=${n}`)
      .join(', ');
    out.push(`${r.scenario}: duplicates by fault: ${attributed || 'none'}; redeliveries by the broker: ${r.brokerRedeliveries}`);
    for (const [what, samples] of Object.entries(r.samples)) if (samples.length > 0) out.push(`  ${what}: ${samples.join('; ')}`);
    if (r.faultsOverBudget.length > 0) out.push(`  over budget: ${r.faultsOverBudget.join('; ')}`);
    if (r.canaryLeaks.length > 0) out.push(`  CANARY LEAKED in: ${r.canaryLeaks.join(', ')}`);
    if (r.byDestination !== undefined) {
      for (const [name, c] of Object.entries(r.byDestination)) {
        out.push(
          `  ${name}: committed ${c.committed}, delivered ${c.delivered}, lost ${c.lost}, phantom ${c.phantom}, dups ${c.duplicates} (unattributed ${c.duplicatesUnattributed}), inversions ${c.orderInversions}, dead ${c.normalDead}, stuck ${c.stuck}, maxAge ${c.maxUnpublishedAgeMs} ms`,
        );
      }
    }
    if (r.fanOut !== undefined) out.push(...formatFanOut(r.fanOut));
    if (r.ownership !== undefined) out.push(...formatOwnership(r.ownership));
  }
  return `${out.join('\n')}\n`;
}

/** `-`: not within the window (the next event came first, or the run ended). */
const ms = (value: number | null) => (value === null ? '-' : `${value}`);
const latency = (l: LatencyFigures) => `${l.messages} messages, p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms`;

/** The hand-over and broker-cut figures of a scenario that sampled partition ownership. */
export function formatOwnership(f: OwnershipFigures): string[] {
  const out = [`  ownership: ${f.samples} samples, every ${f.sampleGapMeanMs} ms on average (longest gap ${f.sampleGapMaxMs} ms)`];
  const kinds = [...new Set(f.handovers.map((h) => h.kind))];
  for (const kind of kinds) {
    const of = f.handovers.filter((h) => h.kind === kind);
    out.push(`  ${kind}: unowned ms ${of.map((h) => h.unownedMs).join(', ')}; settled after ms ${of.map((h) => ms(h.settledMs)).join(', ')}`);
  }
  if (f.joinUnownedMaxMs !== null || f.leaveUnownedMaxMs !== null) {
    out.push(
      `  hand-overs: join max ${ms(f.joinUnownedMaxMs)} ms, graceful leave max ${ms(f.leaveUnownedMaxMs)} ms, total ${f.gracefulUnownedTotalMs} ms unowned`,
    );
  }
  for (const c of f.cuts) {
    out.push(
      `  broker cut of ${c.target} (${c.downMs} ms, held ${c.heldAtCut}): trouble after ${ms(c.troubleMs)} ms, every partition served after ${ms(c.servedMs)} ms, share back ${ms(c.shareBackMs)} ms after the heal; committed during it: ${latency(c.latency)}`,
    );
  }
  if (f.cuts.length > 0) out.push(`  during the cuts: ${latency(f.cutLatency)}; served after at most ${ms(f.cutToServedMaxMs)} ms`);
  out.push(`  latency of the run: ${latency(f.latency)}`);
  if (f.missed.length > 0) out.push(`  TARGETS MISSED: ${f.missed.join('; ')}`);
  return out;
}

const p50p99 = (l: LatencyFigures) => `${l.messages} msgs p50 ${l.p50Ms} / p99 ${l.p99Ms} ms`;

/** The figures of a fan-out scenario: each outage, then each destination's latency by commit time. */
export function formatFanOut(f: FanOutFigures): string[] {
  const out: string[] = [];
  for (const o of f.outages) {
    const heal = Object.entries(o.atHeal)
      .map(([what, n]) => `${what} ${n}`)
      .join(', ');
    out.push(
      `  outage of ${o.destination} (${o.downMs} ms): paused after ${ms(o.pausedAfterMs)} ms, resumed ${ms(o.resumedAfterMs)} ms after the heal; ${o.heldMessages} committed during it; all caught up ${ms(o.caughtUpMs)} ms after the heal; outbox at the heal: ${heal || '-'}`,
    );
  }
  for (const d of f.destinations) {
    const bound = d.boundP99Ms === null ? 'not bounded' : `bound p99 ${d.boundP99Ms} ms`;
    out.push(
      `  ${d.destination}${d.cut ? ' (cut)' : ''}: during ${p50p99(d.during)}; outside ${p50p99(d.outside)} (before ${p50p99(d.before)}, after the catch-up ${p50p99(d.after)}); ${bound}; during the catch-up ${p50p99(d.catchUp)}, max ${d.catchUp.maxMs} ms`,
    );
  }
  if (f.missed.length > 0) out.push(`  TARGETS MISSED: ${f.missed.join('; ')}`);
  return out;
}
