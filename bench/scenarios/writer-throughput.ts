import { PostgresCpuMeter } from '../measure/process-cpu.js';
import { queriesSent } from '../measure/query-counter.js';
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
 *
 * PostgreSQL's CPU per committed transaction in each phase (every server process from /proc, as in (l), less other
 * sessions' live backends): its running/stopped ratio is what the relay costs the database in steady state, the
 * projection of the writers' throughput on a server that the database's CPU bounds.
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
  const meter = await PostgresCpuMeter.open(admin);
  if (meter === null) result.notes.push('PostgreSQL runs out of sight of /proc here (another pid namespace): its CPU is not measured.');
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
          // µs of PostgreSQL CPU per phase, beside its run; NaN where /proc does not show the server
          const databaseCpu: Record<(typeof PHASES)[number], number[]> = { stopped: [], running: [] };
          // of that, the relay's own backends (by its pool's application_name) and the server's reaped children (autovacuum)
          const relayOwnCpu: number[] = [];
          const reapedCpu: Record<(typeof PHASES)[number], number[]> = { stopped: [], running: [] };
          // a contender with a database of its own (MariaDB, SQLite) leaves PostgreSQL idle: nothing of its to measure
          const onPostgres = meter !== null && contender.writer === undefined;
          // statements the relay's own pool sent during the running phases (at the driver: reads, completions, beats)
          let relayStatements = 0;
          let first = 0;
          for (const phase of PHASES) {
            log(`(c) ${contender.name}: relay ${phase}`);
            if (phase === 'running') await session.start();
            const writing = phase === 'running' ? contender : stoppedSession.contender;
            if (onPostgres) meter.start();
            const sentBefore = queriesSent(contender.appName);
            const run = await runWriters({ pool, contender: writing, connections, seconds: sizes.writerSeconds, firstMessage: first });
            if (phase === 'running') relayStatements += queriesSent(contender.appName) - sentBefore;
            const cpu = onPostgres ? await meter.stop(process.pid, contender.appName) : undefined;
            databaseCpu[phase].push(cpu?.total ?? Number.NaN);
            reapedCpu[phase].push(cpu?.reaped ?? Number.NaN);
            if (phase === 'running') relayOwnCpu.push(cpu?.namedBackends ?? Number.NaN);
            if (phase === 'running') await contender.stop();
            first += run.commits + run.errors;
            runs[phase].push(run);
          }
          const rate = (phaseRuns: readonly WriterRun[]) =>
            phaseRuns.reduce((sum, run) => sum + run.commits, 0) / phaseRuns.reduce((sum, run) => sum + run.seconds, 0);
          const ratio = rate(runs.running) / rate(runs.stopped);
          const commits = (phase: (typeof PHASES)[number]) => runs[phase].reduce((sum, run) => sum + run.commits, 0);
          const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
          const cpuPerTx = (phase: (typeof PHASES)[number]) => sum(databaseCpu[phase]) / commits(phase);
          const pgRatio = cpuPerTx('running') / cpuPerTx('stopped');
          const latency = runs.running[runs.running.length - 1]?.transactionLatency.summary();
          result.rows.push({
            contender: contender.name,
            metrics: {
              stoppedTxPerSecond: Math.round(rate(runs.stopped)),
              runningTxPerSecond: Math.round(rate(runs.running)),
              ratio: round(ratio),
              pgUsPerTxStopped: round(cpuPerTx('stopped')),
              pgUsPerTxRunning: round(cpuPerTx('running')),
              // what the relay adds to PostgreSQL's CPU per committed transaction: 1.11 = 11 % more
              pgPerTxRatio: round(pgRatio),
              pgRelayBackendsUsPerTx: round(sum(relayOwnCpu) / commits('running')),
              pgReapedUsPerTxStopped: round(sum(reapedCpu.stopped) / commits('stopped')),
              pgReapedUsPerTxRunning: round(sum(reapedCpu.running) / commits('running')),
              runningTxP50Ms: round(latency?.p50 ?? Number.NaN),
              runningTxP99Ms: round(latency?.p99 ?? Number.NaN),
              relayConfirms: clock.confirms,
              relayStatementsPerTx: round(relayStatements / commits('running')),
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
          if (isOutboxerRelay(contender.name)) {
            result.targets.push(target(targetFor(contender.name, 'writer throughput with relay >= 0.9 x without'), '>= 0.9', round(ratio), (v) => v >= 0.9));
            if (onPostgres)
              result.targets.push(
                target(
                  targetFor(contender.name, 'PostgreSQL CPU per committed transaction with relay <= 1.11 x without'),
                  '<= 1.11',
                  round(pgRatio),
                  (v) => v <= 1.11,
                ),
              );
          }
        } finally {
          await pool.end();
        }
      }),
    );
  }
  result.notes.push(
    "pgUsPerTx: µs of PostgreSQL CPU per committed transaction over the phases of each kind (every server process from /proc, 10 ms ticks, the writers' and the relay's backends and the background workers; other sessions' live backends left out, as in (l)); pgPerTxRatio: running / stopped, what the relay adds per transaction; pgRelayBackendsUsPerTx: of the running phases' CPU, what the relay's own backends spent (by application_name); pgReapedUsPerTx: what children that ended in the phase spent (autovacuum workers). relayStatementsPerTx: statements the relay's own pool sent during the running phases (counted at the driver: reads, completions, beats) per committed transaction.",
  );
  aheadTargets(result, 'ratio', true);
  return result;
}
