import { benchPool } from '../support/database.js';
import { runWriters, type WriterRun } from '../support/writers.js';
import { withRelaySession } from './relay-session.js';
import { aheadTargets, newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';
import { isOutboxerRelay, targetFor } from '../contenders/contender.js';

const RELAY_CONNECTIONS = 6;
/** Phases alternate stopped, running, stopped, running, stopped, so drift of the shared machine hits both sides. */
const PHASES = ['stopped', 'running', 'stopped', 'running', 'stopped'] as const;

/**
 * (c) Writer throughput at N connections (closed loop: BEGIN, enqueue one message, COMMIT, after-commit call)
 * with the relay running vs stopped. Running phases write to a table whose relay runs; stopped phases write to
 * a second, identical table that no relay serves, so a running phase never starts by draining the backlog a
 * stopped phase left (that would measure catching up, not running alongside the writers).
 */
export async function writerThroughput(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, admin, log } = context;
  const broker = context.brokers[0] ?? 'rabbitmq';
  const connections = sizes.writerConnections;
  const result = newResult('c', `Writer throughput at ${connections} connections, relay running vs stopped`, {
    writerConnections: connections,
    phaseSeconds: sizes.writerSeconds,
    phases: PHASES.join(' '),
    broker,
    relayConnections: RELAY_CONNECTIONS,
    keys: sizes.keys,
  });
  for (const factory of context.contenders) {
    const served = { topic: '', keys: sizes.keys, payloadBytes: sizes.payloadBytes };
    const unserved = { topic: 'bench.unserved', keys: sizes.keys, payloadBytes: sizes.payloadBytes };
    await withRelaySession(admin, factory, { workload: served, relayConnections: RELAY_CONNECTIONS }, broker, (session) =>
      withRelaySession(admin, factory, { workload: unserved, relayConnections: RELAY_CONNECTIONS }, undefined, async (stoppedSession) => {
        const { contender, clock } = session;
        served.topic = session.target?.topic ?? '';
        const pool = benchPool('bench-writer', connections);
        try {
          const runs: Record<(typeof PHASES)[number], WriterRun[]> = { stopped: [], running: [] };
          let first = 0;
          for (const phase of PHASES) {
            log(`(c) ${contender.name}: relay ${phase}`);
            if (phase === 'running') await session.start();
            const writing = phase === 'running' ? contender : stoppedSession.contender;
            const run = await runWriters({ pool, contender: writing, connections, seconds: sizes.writerSeconds, firstMessage: first });
            if (phase === 'running') await contender.stop();
            first += run.commits + run.errors;
            runs[phase].push(run);
          }
          const rate = (phaseRuns: readonly WriterRun[]) =>
            phaseRuns.reduce((sum, run) => sum + run.commits, 0) / phaseRuns.reduce((sum, run) => sum + run.seconds, 0);
          const ratio = rate(runs.running) / rate(runs.stopped);
          const latency = runs.running[runs.running.length - 1]?.transactionLatency.summary();
          result.rows.push({
            contender: contender.name,
            metrics: {
              stoppedTxPerSecond: Math.round(rate(runs.stopped)),
              runningTxPerSecond: Math.round(rate(runs.running)),
              ratio: round(ratio),
              runningTxP50Ms: round(latency?.p50 ?? Number.NaN),
              runningTxP99Ms: round(latency?.p99 ?? Number.NaN),
              relayConfirms: clock.confirms,
              // below 1: the relay fell behind its writers, and the running phases cost them less than keeping up would
              relayShare: round(clock.confirms / runs.running.reduce((sum, run) => sum + run.messages, 0)),
            },
          });
          const all = [...runs.stopped, ...runs.running];
          const errors = all.reduce((sum, run) => sum + run.errors, 0);
          result.checks.push({
            name: `${contender.name}: writers committed without errors`,
            ok: errors === 0 && runs.running.every((run) => run.commits > 0),
            detail: `${errors} errors ${all.find((run) => run.lastError !== undefined)?.lastError ?? ''}`.trim(),
          });
          result.checks.push({
            name: `${contender.name}: relay published while running`,
            ok: clock.confirms > 0 && clock.failures === 0,
            detail: `${clock.confirms} confirms, ${clock.failures} failures`,
          });
          if (isOutboxerRelay(contender.name))
            result.targets.push(target(targetFor(contender.name, 'writer throughput with relay >= 0.9 x without'), '>= 0.9', round(ratio), (v) => v >= 0.9));
        } finally {
          await pool.end();
        }
      }),
    );
  }
  aheadTargets(result, 'ratio', true);
  return result;
}
