import type { RelayContender } from '../contenders/contender.js';
import { isOutboxerRelay } from '../contenders/contender.js';
import { LatencyHistogram, type LatencySummary } from '../measure/latency-histogram.js';
import { withRelaySession } from './relay-session.js';
import { aheadTargets, newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

/** A contender whose claims are slow on the large table gets at most this long per table size (at least 3 claims). */
const CLAIM_BUDGET_MS = 60_000;

/**
 * (e) Claim time against table size: the same contender's claim (its own statement: outboxer's store.claim,
 * the naive SELECT, the peer's next_outbox_messages), timed alone and then undone, on a table holding the
 * small number of pending rows, then after loading up to the large number. No broker involved.
 */
export async function claimScaling(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, admin, log } = context;
  const [small, large] = sizes.claimTableRows;
  const result = newResult('e', `Claim time on ${large.toLocaleString('en-US')} rows vs ${small.toLocaleString('en-US')}`, {
    smallRows: small,
    largeRows: large,
    claimsTimed: sizes.claimsTimed,
    claimBatch: sizes.claimBatch,
    keys: sizes.keys,
    rows: 'all pending (a backlog)',
  });
  for (const factory of context.contenders) {
    const workload = { topic: 'bench.claim', keys: sizes.keys, payloadBytes: sizes.payloadBytes };
    await withRelaySession(admin, factory, { workload, relayConnections: 2 }, undefined, async ({ contender }) => {
      const claim = contender.claimOnce?.bind(contender);
      if (claim === undefined) {
        result.notes.push(`${contender.name} has no claim of its own to time (see BENCHMARKS.md).`);
        return;
      }
      log(`(e) ${contender.name}: ${small} rows`);
      await contender.load(admin, 0, small);
      const onSmall = await timeClaims(claim, sizes.claimsTimed, sizes.claimBatch);
      log(`(e) ${contender.name}: loading up to ${large} rows`);
      await contender.load(admin, small, large - small);
      const onLarge = await timeClaims(claim, sizes.claimsTimed, sizes.claimBatch);
      const ratio = onLarge.summary.p99 / onSmall.summary.p99;
      result.rows.push({
        contender: contender.name,
        metrics: {
          claimedPerCall: onSmall.claimedPerCall,
          smallP50Ms: round(onSmall.summary.p50),
          smallP99Ms: round(onSmall.summary.p99),
          largeP50Ms: round(onLarge.summary.p50),
          largeP99Ms: round(onLarge.summary.p99),
          p99Ratio: round(ratio),
          claimsSmall: onSmall.summary.count,
          claimsLarge: onLarge.summary.count,
        },
      });
      result.checks.push({
        name: `${contender.name}: claims returned messages and finite times`,
        ok: onSmall.claimedPerCall > 0 && onLarge.claimedPerCall > 0 && Number.isFinite(ratio),
        detail: `${onSmall.claimedPerCall} / ${onLarge.claimedPerCall} per claim`,
      });
      if (isOutboxerRelay(contender.name)) result.targets.push(target('claim p99 large <= 2 x small', '<= 2', round(ratio), (v) => v <= 2));
    });
  }
  aheadTargets(result, 'p99Ratio', false); // per-call times differ in what a call returns (the naive relay fetches one row)
  return result;
}

type Claim = NonNullable<RelayContender['claimOnce']>;

async function timeClaims(claimOnce: Claim, count: number, limit: number): Promise<{ summary: LatencySummary; claimedPerCall: number }> {
  const histogram = new LatencyHistogram();
  let claimed = 0;
  await claimOnce(limit); // warm the plan and the cache once, untimed
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    if (i >= 3 && performance.now() - started > CLAIM_BUDGET_MS) break;
    const { claimed: got, ms } = await claimOnce(limit);
    histogram.record(ms);
    claimed += got;
  }
  return { summary: histogram.summary(), claimedPerCall: Math.round(claimed / Math.max(1, histogram.count)) };
}
