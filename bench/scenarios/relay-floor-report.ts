import type { BrokerKind } from '../support/broker-target.js';
import { type Drain, FLOOR_SIDES, type FloorDatabase, type FloorSide, floorName } from './relay-floor-database.js';
import { type Metric, round, type ScenarioResult, target } from './scenario.js';

const ratio = (a: Metric | undefined, b: Metric | undefined): number | null =>
  typeof a === 'number' && typeof b === 'number' && Number.isFinite(a) && Number.isFinite(b) && b > 0 ? round(a / b) : null;

/** One side's drains pooled over the rounds: rates, and CPU per message of the relay, the broker and each database part. */
function pooled(database: FloorDatabase, n: number, runs: readonly Drain[]): Record<string, Metric> {
  const messages = n * runs.length;
  const sum = (pick: (d: Drain) => number | null | undefined) => runs.reduce((total, d) => total + (pick(d) ?? Number.NaN), 0);
  const perMsg = (pick: (d: Drain) => number | null | undefined) => round(sum(pick) / messages, 1);
  const parts = Object.fromEntries(database.cpuParts.map((part) => [`${part}UsPerMsg`, perMsg((d) => d.database?.parts[part])]));
  const counted = Object.keys(runs[0]?.database?.counts ?? {});
  const counts = Object.fromEntries(counted.map((name) => [`${name}Per1kMsg`, round((sum((d) => d.database?.counts?.[name]) * 1000) / messages, 1)]));
  return {
    perSecond: Math.round(messages / sum((d) => d.seconds)),
    roundRates: runs.map((d) => Math.round(n / d.seconds)).join(' '),
    firstS: round(sum((d) => d.firstSeconds) / runs.length),
    afterFirstPerSecond: Math.round(messages / sum((d) => d.seconds - d.firstSeconds)),
    emptyS: round(sum((d) => d.emptySeconds) / runs.length),
    ...parts,
    ...counts,
    relayUsPerMsg: perMsg((d) => d.relayCpu),
    brokerUsPerMsg: perMsg((d) => d.brokerCpu),
    peakRssMb: Math.round(Math.max(...runs.map((d) => d.peakRssMb))),
    ...(database.meter === null ? {} : { otherSessions: Math.max(...runs.map((d) => d.database?.otherSessions ?? 0)) }),
  };
}

/**
 * The rows of one database and broker, with each side's ratios to the ideal relay's, and the three targets:
 * drain ≥ 0.9 × the ideal's, database CPU per message ≤ 2 × (its first CPU part; none for SQLite, whose database
 * runs in the relay), relay process CPU per message ≤ 1.5 ×. Rows and targets of PostgreSQL keep their names.
 */
export function reportFloor(result: ScenarioResult, database: FloorDatabase, broker: BrokerKind, n: number, drains: Record<FloorSide, Drain[]>): void {
  const ideal = pooled(database, n, drains.ideal);
  const ours = pooled(database, n, drains.outboxer);
  const vs = (m: Record<string, Metric>, stem: string) => ratio(m[`${stem}UsPerMsg`], ideal[`${stem}UsPerMsg`]);
  for (const side of FLOOR_SIDES) {
    const m = side === 'ideal' ? ideal : ours;
    const ratios: Record<string, Metric> = {
      rateVsIdeal: ratio(m.perSecond, ideal.perSecond),
      afterFirstVsIdeal: ratio(m.afterFirstPerSecond, ideal.afterFirstPerSecond),
    };
    // pgReaped has no ratio: other suites' ended sessions land in it
    for (const part of database.cpuParts.filter((p) => p !== 'pgReaped')) ratios[`${part}VsIdeal`] = vs(m, part);
    ratios.relayVsIdeal = vs(m, 'relay');
    ratios.brokerVsIdeal = vs(m, 'broker');
    result.rows.push({ contender: floorName(side, database), broker, metrics: { database: database.label, ...m, ...ratios } });
  }
  const on = database.kind === 'postgres' ? '' : ` (${database.label})`;
  const rate = ratio(ours.perSecond, ideal.perSecond);
  result.targets.push(target(`drain ${broker} >= 0.9 x the ideal relay${on}`, '>= 0.9', rate, (v) => v >= 0.9));
  const server = database.cpuParts[0];
  if (server !== undefined) {
    const name = database.kind === 'postgres' ? 'PostgreSQL' : `${database.label} (${server})`;
    result.targets.push(target(`${broker}: ${name} CPU per message <= 2 x the ideal relay's`, '<= 2', vs(ours, server), (v) => v <= 2));
  }
  result.targets.push(target(`${broker}: relay process CPU per message <= 1.5 x the ideal relay's${on}`, '<= 1.5', vs(ours, 'relay'), (v) => v <= 1.5));
}
