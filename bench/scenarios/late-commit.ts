import type { ContenderFactory } from '../contenders/contender.js';
import { isOutboxerRelay } from '../contenders/contender.js';
import { LatencyHistogram } from '../measure/latency-histogram.js';
import type { BrokerKind } from '../support/broker-target.js';
import { benchPool } from '../support/database.js';
import { LateCommitRounds, type WriterPath } from '../support/late-commit-rounds.js';
import { settle, withRelaySession } from './relay-session.js';
import { newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

const RELAY_CONNECTIONS = 4;
/** How long a round waits for one confirmation before counting it as missing (v1's full sweep is every 1 s). */
const CONFIRM_BOUND_MS = 10_000;
const VARIANTS = [
  { name: 'otherKey', sameKey: false },
  { name: 'sameKey', sameKey: true },
] as const;

/**
 * (h) Late commits: a message whose transaction drew its seq first but commits after a later one was
 * committed and confirmed. Per round: one in-order commit (the baseline), then a late commit with b on
 * another key, then one with b on the same key, each confirmed before the next; both writer paths.
 */
export async function lateCommit(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes } = context;
  const result = newResult('h', `Late commits: a message committed after a later seq was, ${sizes.lateCommitRounds} rounds`, {
    rounds: sizes.lateCommitRounds,
    relayConnections: RELAY_CONNECTIONS,
    keys: sizes.keys,
    confirmBoundMs: CONFIRM_BOUND_MS,
  });
  for (const broker of context.brokers) {
    for (const factory of context.contendersOn(broker)) await lateOne(context, broker, factory, result);
  }
  result.notes.push(
    "Latency: COMMIT of a returned → the broker confirmed a. otherKey/sameKey: b (another key / a's key) was committed and confirmed while a's transaction was open; in sameKey rounds a's session commits c (same key) right after a, and c must not be published before a.",
    'path wake: own BEGIN/COMMIT, then notifyCommitted(); path transaction: outbox.transaction (engine v1: the hand-off; engine v2: a wake-up).',
  );
  return result;
}

async function lateOne(context: ScenarioContext, broker: BrokerKind, factory: ContenderFactory, result: ScenarioResult): Promise<void> {
  const { sizes, admin, log } = context;
  const workload = { topic: '', keys: sizes.keys, payloadBytes: sizes.payloadBytes };
  await withRelaySession(admin, factory, { workload, relayConnections: RELAY_CONNECTIONS }, broker, async (session) => {
    const { contender, clock, order } = session;
    workload.topic = session.target?.topic ?? '';
    const pool = benchPool('bench-writer', 2);
    const sessionA = await pool.connect();
    const sessionB = await pool.connect();
    try {
      await session.start();
      const rounds = new LateCommitRounds(contender, clock, [sessionA, sessionB], sizes.keys, CONFIRM_BOUND_MS);
      const paths: WriterPath[] = contender.transaction === undefined ? ['wake'] : ['wake', 'transaction'];
      for (const path of paths) {
        const who = `${broker} ${contender.name} ${path}`;
        log(`(h) ${who}: ${sizes.lateCommitRounds} rounds`);
        const warmedUp = (await rounds.inOrder(path)) !== undefined; // the relay has started (v2: holds its partitions)
        const inOrder = new LatencyHistogram();
        const late = { otherKey: new LatencyHistogram(), sameKey: new LatencyHistogram() };
        const violationsBefore = order.violations;
        let unconfirmed = 0;
        let otherUnconfirmed = 0;
        const record = (histogram: LatencyHistogram, ms: number | undefined) => (ms === undefined ? unconfirmed++ : histogram.record(ms));
        for (let i = 0; i < sizes.lateCommitRounds; i++) {
          record(inOrder, await rounds.inOrder(path));
          for (const variant of VARIANTS) {
            const outcome = await rounds.late(path, variant.sameKey);
            record(late[variant.name], outcome.latencyMs);
            if (!outcome.otherConfirmed || !outcome.followUpConfirmed) otherUnconfirmed++;
          }
        }
        const base = inOrder.summary();
        const [other, same] = [late.otherKey.summary(), late.sameKey.summary()];
        const violations = order.violations - violationsBefore;
        result.rows.push({
          contender: contender.name,
          broker,
          metrics: {
            path,
            inOrderP50Ms: round(base.p50),
            inOrderP99Ms: round(base.p99),
            inOrderMaxMs: round(base.max),
            otherKeyP50Ms: round(other.p50),
            otherKeyP99Ms: round(other.p99),
            otherKeyMaxMs: round(other.max),
            sameKeyP50Ms: round(same.p50),
            sameKeyP99Ms: round(same.p99),
            sameKeyMaxMs: round(same.max),
            keyOrderViolations: violations,
            unconfirmed: unconfirmed + otherUnconfirmed,
          },
        });
        const expected = 3 * sizes.lateCommitRounds;
        result.checks.push({ name: `${who}: the warm-up message was confirmed`, ok: warmedUp, detail: `within ${CONFIRM_BOUND_MS} ms` });
        result.checks.push({
          name: `${who}: every measured message confirmed within the bound`,
          ok: unconfirmed === 0 && base.count + other.count + same.count === expected,
          detail: `${expected - unconfirmed}/${expected} within ${CONFIRM_BOUND_MS} ms`,
        });
        result.checks.push({
          name: `${who}: every b and c confirmed within the bound`,
          ok: otherUnconfirmed === 0,
          detail: `${otherUnconfirmed} rounds with one missing`,
        });
        if (isOutboxerRelay(contender.name)) {
          result.checks.push({ name: `${who}: key order kept`, ok: violations === 0, detail: `${violations} publishes after a later message of their key` });
          for (const [variant, summary] of [
            ['other key', other],
            ['same key', same],
          ] as const) {
            result.targets.push(
              target(`${who}: late-commit (${variant}) p99 <= in-order p99`, '<= 1 x in-order p99', round(summary.p99 / base.p99), (v) => v <= 1),
            );
          }
        }
      }
      await contender.stop();
      const stored = await settle(() => session.target!.stored(), clock.confirms);
      result.checks.push({
        name: `${broker} ${contender.name}: broker holds every confirmed message`,
        ok: stored === clock.confirms && clock.failures === 0,
        detail: `stored ${stored}, confirmed ${clock.confirms}, ${clock.failures} failures`,
      });
    } finally {
      sessionA.release();
      sessionB.release();
      await pool.end();
    }
  });
}
