/**
 * The chaos suite's load profiles and how a scenario's specs are resolved: the sustained schedule asks for
 * the rate, and the engine reaches the relay spec. The engine switch runs on PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { laneIntervalMs, LOADS, meanCommittedPerTransaction, parseLoad } from '../../chaos/load.js';
import { resolveSpecs } from '../../chaos/resolve-specs.js';
import { rabbitDatabaseFull } from '../../chaos/scenarios/rabbit-database.js';

describe('chaos load profiles', () => {
  it('sustained: over 10,000 committed messages, at a schedule of at least 500 msg/s', () => {
    const sustained = LOADS.sustained.workload;
    const committed = sustained.writers * sustained.txnsPerWriter * meanCommittedPerTransaction(sustained);
    expect(committed).toBeGreaterThan(10_000);
    const interval = laneIntervalMs(sustained);
    expect(interval).not.toBeNull();
    const perSecond = (sustained.writers * sustained.lanes * 1000 * meanCommittedPerTransaction(sustained)) / (interval as number);
    expect(perSecond).toBeCloseTo(sustained.ratePerSecond as number, 6);
    expect(perSecond).toBeGreaterThanOrEqual(500);
  });

  it('light has no schedule (the ci set keeps its pace), and an unknown load is refused', () => {
    expect(laneIntervalMs(LOADS.light.workload)).toBeNull();
    expect(parseLoad('sustained')).toBe('sustained');
    expect(() => parseLoad('heavy')).toThrow(/--load must be light or sustained; got heavy/);
  });

  it('a scenario can scale its writes with the load', () => {
    expect(resolveSpecs(rabbitDatabaseFull, 'light', 'v2').workload.txnsPerWriter).toBe(600);
    expect(resolveSpecs(rabbitDatabaseFull, 'sustained', 'v2').workload.txnsPerWriter).toBe(2 * LOADS.sustained.workload.txnsPerWriter);
  });

  it("the load changes the relay spec (sustained: claims of 100), the scenario's own changes win", () => {
    expect(resolveSpecs({}, 'light', 'v2').relay.batchSize).toBe(20);
    expect(resolveSpecs({}, 'sustained', 'v2').relay.batchSize).toBe(100);
    expect(resolveSpecs({ relay: { batchSize: 7 } }, 'sustained', 'v2').relay.batchSize).toBe(7);
  });

  it('the engine enters the relay spec', () => {
    expect(resolveSpecs({}, 'light', 'v2').relay.engine).toBe('v2');
  });
});
