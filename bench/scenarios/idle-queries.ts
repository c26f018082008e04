import { queriesSent } from '../measure/query-counter.js';
import { withRelaySession } from './relay-session.js';
import { aheadTargets, newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';
import { isOutboxerRelay } from '../contenders/contender.js';

/**
 * (d) Statements per second an idle relay sends (empty outbox, nothing written), counted at the driver by
 * application_name (see measure/query-counter.ts) over a window that starts after a warm-up, once the
 * relay's poll back-off has settled.
 */
export async function idleQueries(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, admin, log } = context;
  const broker = context.brokers[0] ?? 'rabbitmq';
  const result = newResult('d', 'Database statements per second of an idle relay', {
    warmupSeconds: sizes.idleWarmupSeconds,
    windowSeconds: sizes.idleSeconds,
    broker,
    method: 'driver-side count per application_name',
  });
  for (const factory of context.contenders) {
    const workload = { topic: '', keys: sizes.keys, payloadBytes: sizes.payloadBytes };
    await withRelaySession(admin, factory, { workload, relayConnections: 4 }, broker, async (session) => {
      const { contender } = session;
      workload.topic = session.target?.topic ?? '';
      log(`(d) ${contender.name}: idle for ${sizes.idleWarmupSeconds + sizes.idleSeconds} s`);
      await session.start();
      await new Promise((resolve) => setTimeout(resolve, sizes.idleWarmupSeconds * 1000));
      const before = queriesSent(contender.appName);
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, sizes.idleSeconds * 1000));
      const sent = queriesSent(contender.appName) - before;
      const seconds = (performance.now() - started) / 1000;
      await contender.stop();
      const perSecond = sent / seconds;
      result.rows.push({ contender: contender.name, metrics: { statements: sent, seconds: round(seconds), perSecond: round(perSecond) } });
      result.checks.push({
        name: `${contender.name}: relay polled while idle`,
        ok: queriesSent(contender.appName) > 0,
        detail: `${queriesSent(contender.appName)} statements in all`,
      });
      if (isOutboxerRelay(contender.name)) result.targets.push(target('idle relay <= 1 statement/s', '<= 1', round(perSecond), (v) => v <= 1));
    });
  }
  aheadTargets(result, 'perSecond', false);
  result.notes.push('A fixed-interval measuring window is the point of this scenario (not a wait for a condition).');
  return result;
}
