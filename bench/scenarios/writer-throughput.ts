import { benchPool } from '../support/database.js';
import { runWriters, type WriterRun } from '../support/writers.js';
import { withRelaySession } from './relay-session.js';
import { aheadTargets, newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

const RELAY_CONNECTIONS = 6;

/**
 * (c) Writer throughput at N connections (closed loop: BEGIN, enqueue one message, COMMIT, after-commit call)
 * with the relay stopped, running, stopped again: ratio running / mean of the two stopped phases, so drift of
 * the shared machine hits both sides. The running phase also drains what the first phase left behind.
 */
export async function writerThroughput(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, admin, log } = context;
  const broker = context.brokers[0] ?? 'rabbitmq';
  const connections = sizes.writerConnections;
  const result = newResult('c', `Writer throughput at ${connections} connections, relay running vs stopped`, {
    writerConnections: connections, phaseSeconds: sizes.writerSeconds, broker, relayConnections: RELAY_CONNECTIONS, keys: sizes.keys,
  });
  for (const factory of context.contenders) {
    const workload = { topic: '', keys: sizes.keys, payloadBytes: sizes.payloadBytes };
    await withRelaySession(admin, factory, { workload, relayConnections: RELAY_CONNECTIONS }, broker, async (session) => {
      const { contender, clock } = session;
      workload.topic = session.target?.topic ?? '';
      const pool = benchPool('bench-writer', connections);
      try {
        let first = 0;
        const phase = async (label: string): Promise<WriterRun> => {
          log(`(c) ${contender.name}: ${label}`);
          const run = await runWriters({ pool, contender, connections, seconds: sizes.writerSeconds, firstMessage: first });
          first += run.commits + run.errors;
          return run;
        };
        const stoppedBefore = await phase('relay stopped');
        await session.start();
        const running = await phase('relay running');
        await contender.stop();
        const stoppedAfter = await phase('relay stopped again');
        const rate = (run: WriterRun) => run.commits / run.seconds;
        const stoppedRate = (rate(stoppedBefore) + rate(stoppedAfter)) / 2;
        const ratio = rate(running) / stoppedRate;
        const latency = running.transactionLatency.summary();
        result.rows.push({
          contender: contender.name,
          metrics: {
            stoppedTxPerSecond: Math.round(stoppedRate), runningTxPerSecond: Math.round(rate(running)), ratio: round(ratio),
            runningTxP50Ms: round(latency.p50), runningTxP99Ms: round(latency.p99), relayConfirms: clock.confirms,
          },
        });
        const errors = stoppedBefore.errors + running.errors + stoppedAfter.errors;
        result.checks.push({ name: `${contender.name}: writers committed without errors`, ok: errors === 0 && running.commits > 0, detail: `${errors} errors ${running.lastError ?? ''}`.trim() });
        result.checks.push({ name: `${contender.name}: relay published while running`, ok: clock.confirms > 0 && clock.failures === 0, detail: `${clock.confirms} confirms, ${clock.failures} failures` });
        if (contender.name === 'outboxer') result.targets.push(target('writer throughput with relay >= 0.9 x without', '>= 0.9', round(ratio), (v) => v >= 0.9));
      } finally {
        await pool.end();
      }
    });
  }
  aheadTargets(result, 'ratio', true);
  return result;
}
