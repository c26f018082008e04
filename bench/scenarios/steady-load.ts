import type { ContenderFactory } from '../contenders/contender.js';
import { isOutboxerRelay } from '../contenders/contender.js';
import { BacklogSampler } from '../measure/backlog-sampler.js';
import type { BrokerKind } from '../support/broker-target.js';
import { adminClient, benchPool } from '../support/database.js';
import { runWriters } from '../support/writers.js';
import { withRelaySession, settle } from './relay-session.js';
import { aheadTargets, newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

const RELAY_CONNECTIONS = 8;
/** After the writers stop, how long outboxer may take to confirm what is left (others get the load's length). */
const DRAIN_GRACE_MS = 15_000;

/**
 * (b) Steady load: open-loop writers at a fixed rate (BEGIN, enqueue, COMMIT, after-commit call), the relay
 * running. Commit-to-confirm latency per message (COMMIT returned → the broker's confirm resolved, one clock),
 * and the backlog sampled from a separate connection: its maximum, its last value and its slope.
 */
export async function steadyLoad(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes } = context;
  const result = newResult('b', `Steady load at ${sizes.steadyRates.join(' and ')} messages/s`, {
    rates: sizes.steadyRates.join(', '),
    seconds: sizes.steadySeconds,
    writers: sizes.steadyWriters,
    messagesPerTransaction: sizes.steadyMessagesPerTransaction,
    relayConnections: RELAY_CONNECTIONS,
    keys: sizes.keys,
  });
  for (const broker of context.brokers) {
    for (const rate of sizes.steadyRates) {
      for (const factory of context.contendersOn(broker)) await steadyOne(context, broker, rate, factory, result);
      aheadTargets(result, `p99Ms@${rate}`, false, broker);
    }
  }
  result.notes.push('Latencies of contenders that leave messages unconfirmed at the end cover only the confirmed ones (a lower bound).');
  return result;
}

async function steadyOne(context: ScenarioContext, broker: BrokerKind, rate: number, factory: ContenderFactory, result: ScenarioResult): Promise<void> {
  const { sizes, admin, log } = context;
  const workload = { topic: '', keys: sizes.keys, payloadBytes: sizes.payloadBytes };
  await withRelaySession(admin, factory, { workload, relayConnections: RELAY_CONNECTIONS }, broker, async (session) => {
    const { contender, clock } = session;
    workload.topic = session.target?.topic ?? '';
    log(`(b) ${broker} ${rate}/s: ${contender.name}, ${sizes.steadySeconds} s`);
    const pool = benchPool('bench-writer', sizes.steadyWriters);
    const sampling = await adminClient('bench-sampler');
    try {
      clock.timing = true;
      await session.start();
      const sampler = new BacklogSampler(() => contender.pending(sampling), Math.min(1000, (sizes.steadySeconds * 1000) / 6));
      const run = await runWriters({
        pool,
        contender,
        connections: sizes.steadyWriters,
        seconds: sizes.steadySeconds,
        rate,
        perTransaction: sizes.steadyMessagesPerTransaction,
        onCommit: (id) => clock.committed(id),
      });
      await sampler.stop();
      const allConfirmed = await clock.reach(
        run.messages,
        isOutboxerRelay(contender.name) ? DRAIN_GRACE_MS : Math.min(DRAIN_GRACE_MS, sizes.steadySeconds * 1000),
      );
      await contender.stop();
      const stored = await settle(() => session.target!.stored(), clock.confirms);
      const latency = clock.latencies.summary();
      const backlog = sampler.summary();
      const achieved = run.messages / run.seconds;
      const bounded = backlog.last <= rate && backlog.slopePerSecond <= 0.05 * rate;
      result.rows.push({
        contender: contender.name,
        broker,
        metrics: {
          rate,
          achievedPerSecond: Math.round(achieved),
          [`p50Ms@${rate}`]: round(latency.p50),
          [`p99Ms@${rate}`]: round(latency.p99),
          [`maxMs@${rate}`]: round(latency.max),
          backlogMax: backlog.max,
          backlogLast: backlog.last,
          backlogSlopePerS: round(backlog.slopePerSecond, 1),
          bounded,
          unconfirmedAtEnd: clock.unconfirmed,
        },
      });
      const who = `${broker} ${rate}/s ${contender.name}`;
      result.checks.push({
        name: `${who}: latencies measured and finite`,
        ok: latency.count > 0 && Number.isFinite(latency.p99) && Number.isFinite(latency.max),
        detail: `${latency.count} samples`,
      });
      result.checks.push({
        name: `${who}: writers without errors`,
        ok: run.errors === 0 && run.commits > 0,
        detail: `${run.commits} commits, ${run.errors} errors ${run.lastError ?? ''}`.trim(),
      });
      result.checks.push({
        name: `${who}: broker holds every confirmed message`,
        ok: stored === clock.confirms,
        detail: `stored ${stored}, confirmed ${clock.confirms}`,
      });
      if (isOutboxerRelay(contender.name)) {
        result.checks.push({
          name: `${who}: every commit confirmed`,
          ok: allConfirmed && clock.unconfirmed === 0 && clock.failures === 0,
          detail: `${clock.confirms}/${run.messages} confirmed, ${clock.failures} failures`,
        });
        if (rate <= 1000) {
          result.targets.push(target(`${broker} ${rate}/s commit-to-confirm p50 <= 5 ms`, '<= 5 ms', round(latency.p50), (v) => v <= 5));
          result.targets.push(target(`${broker} ${rate}/s commit-to-confirm p99 <= 25 ms`, '<= 25 ms', round(latency.p99), (v) => v <= 25));
        } else {
          result.targets.push({
            name: `${broker} ${rate}/s backlog bounded`,
            goal: 'last <= 1 s of load, slope <= 5% of rate',
            value: round(backlog.slopePerSecond, 1),
            met: bounded,
          });
        }
        result.targets.push({
          name: `${broker} ${rate}/s writers reached the offered rate (>= 0.95)`,
          goal: 'condition of the run, not a library target',
          value: round(achieved / rate),
          met: achieved >= 0.95 * rate,
        });
      }
    } finally {
      await sampling.end();
      await pool.end();
    }
  });
}
