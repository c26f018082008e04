import type { ContenderFactory } from '../contenders/contender.js';
import { isOutboxerRelay } from '../contenders/contender.js';
import type { BrokerKind } from '../support/broker-target.js';
import { adminClient } from '../support/database.js';
import { withRelaySession } from './relay-session.js';
import { aheadTargets, newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

const RELAY_CONNECTIONS = 8;

/**
 * (f) Drain throughput while another session holds an old snapshot (a REPEATABLE READ transaction that read
 * something and stays open): dead rows the relay leaves behind cannot be pruned, so claims walk over them.
 * Each phase runs on a fresh schema: drain the same backlog for at most `snapshotSeconds`, without, then with
 * the snapshot, taken before the backlog is written and held until the phase ends.
 */
export async function heldSnapshot(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes } = context;
  const broker = context.brokers[0] ?? 'rabbitmq';
  const result = newResult('f', 'Throughput while another session holds an old snapshot', {
    backlog: sizes.snapshotBacklog,
    maxPhaseSeconds: sizes.snapshotSeconds,
    broker,
    relayConnections: RELAY_CONNECTIONS,
    isolation: 'REPEATABLE READ',
  });
  for (const factory of context.contenders) {
    const without = await drainPhase(context, broker, factory, false);
    const withSnapshot = await drainPhase(context, broker, factory, true);
    const ratio = withSnapshot.perSecond / without.perSecond;
    result.rows.push({
      contender: without.name,
      metrics: {
        perSecond: Math.round(without.perSecond),
        snapshotPerSecond: Math.round(withSnapshot.perSecond),
        ratio: round(ratio),
        confirmed: without.confirmed,
        snapshotConfirmed: withSnapshot.confirmed,
        snapshotHeldSeconds: round(withSnapshot.seconds),
      },
    });
    for (const phase of [without, withSnapshot]) {
      result.checks.push({
        name: `${phase.name} ${phase.label}: published without failures`,
        ok: phase.confirmed > 0 && phase.failures === 0 && phase.stored === phase.confirmed,
        detail: `${phase.confirmed} confirmed, ${phase.stored} stored, ${phase.failures} failures`,
      });
    }
    if (isOutboxerRelay(without.name)) result.targets.push(target('throughput under held snapshot >= 0.9 x without', '>= 0.9', round(ratio), (v) => v >= 0.9));
  }
  aheadTargets(result, 'snapshotPerSecond', true);
  return result;
}

interface Phase {
  name: string;
  label: string;
  perSecond: number;
  seconds: number;
  confirmed: number;
  stored: number;
  failures: number;
}

async function drainPhase(context: ScenarioContext, broker: BrokerKind, factory: ContenderFactory, holdSnapshot: boolean): Promise<Phase> {
  const { sizes, admin, log } = context;
  const n = sizes.snapshotBacklog;
  const workload = { topic: '', keys: sizes.keys, payloadBytes: sizes.payloadBytes };
  const holder = holdSnapshot ? await adminClient('bench-snapshot-holder') : undefined;
  try {
    if (holder !== undefined) {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query('SELECT count(*) FROM pg_class'); // the snapshot is taken by the first statement
    }
    return await withRelaySession(admin, factory, { workload, relayConnections: RELAY_CONNECTIONS }, broker, async (session) => {
      const { contender, clock } = session;
      workload.topic = session.target?.topic ?? '';
      const label = holdSnapshot ? 'with a held snapshot' : 'without';
      log(`(f) ${contender.name} ${label}: loading ${n}, draining for at most ${sizes.snapshotSeconds} s`);
      await contender.load(admin, 0, n);
      const started = performance.now();
      await session.start();
      const drained = await clock.reach(n, sizes.snapshotSeconds * 1000);
      const drainedAt = performance.now();
      await contender.stop();
      const seconds = ((drained ? drainedAt : performance.now()) - started) / 1000;
      const stored = await session.target!.stored();
      return { name: contender.name, label, perSecond: clock.confirms / seconds, seconds, confirmed: clock.confirms, stored, failures: clock.failures };
    });
  } finally {
    if (holder !== undefined) {
      await holder.query('COMMIT').catch(() => undefined);
      await holder.end();
    }
  }
}
