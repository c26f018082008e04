import { describe, expect, it } from 'vitest';
import { newOwner } from '../../../src/core/partitions/settlement.js';
import type { PartitionEntry } from '../../../src/core/partition-relay/partition-book.js';
import { lanesNow, PublishLanes } from '../../../src/core/partition-relay/publish-lanes.js';
import { cameBackFull, MIN_TAKE, planRead, rowsByBranch } from '../../../src/core/partition-relay/read-plan.js';
import { MAX_TAKE, type PartitionMessage } from '../../../src/core/ports.js';

const entry = (partition: number, fields: Partial<PartitionEntry> = {}): PartitionEntry => ({
  partition,
  epoch: '1',
  unclean: 0,
  draining: false,
  settlement: newOwner,
  unwritten: new Map(),
  unwrittenRetryAt: 0,
  readAt: 0,
  backlog: false,
  ...fields,
});
const settings = { batchSize: 500, lanes: 3 };
const none = () => false;
const planned = (plan: ReturnType<typeof planRead>) => plan.map(({ entry: e, limit }) => [e.partition, limit]);

describe('planRead', () => {
  it('reads every quiet partition in one statement, sharing the batch size', () => {
    const held = Array.from({ length: 8 }, (_, p) => entry(p));
    expect(planned(planRead(held, none, settings))).toEqual(held.map((e) => [e.partition, Math.ceil(500 / 8)]));
    expect(
      planRead(
        Array.from({ length: 64 }, (_, p) => entry(p)),
        none,
        settings,
      ).every((s) => s.limit === MIN_TAKE),
    ).toBe(true);
  });

  it('reads a lane share of the backlogged partitions, least recently read first, beside every quiet one at the minimum', () => {
    const held = [...Array.from({ length: 6 }, (_, p) => entry(p, { backlog: true, readAt: 100 - p })), entry(6), entry(7)];
    // 6 backlogged over 3 lanes: 2 a read, the two read longest ago (5 and 4), splitting the batch size
    expect(planned(planRead(held, none, settings))).toEqual([
      [5, 250],
      [4, 250],
      [6, MIN_TAKE],
      [7, MIN_TAKE],
    ]);
  });

  it('gives a last backlogged partition the whole batch size', () => {
    expect(planned(planRead([entry(3, { backlog: true }), entry(4)], none, settings))).toEqual([
      [3, 500],
      [4, MIN_TAKE],
    ]);
  });

  it('never asks one branch of a partition for more than MAX_TAKE rows, however large the batch size', () => {
    const big = { batchSize: 10_000, lanes: 3 };
    expect(planned(planRead([entry(3, { backlog: true }), entry(4)], none, big))).toEqual([
      [3, MAX_TAKE],
      [4, MIN_TAKE],
    ]);
    expect(planned(planRead([entry(5)], none, big))).toEqual([[5, MAX_TAKE]]);
  });

  it('skips busy and draining partitions; the share counts busy backlogged partitions too', () => {
    const held = [entry(0, { backlog: true }), entry(1, { backlog: true }), entry(2, { backlog: true }), entry(3, { draining: true }), entry(4)];
    const busy = (p: number) => p === 0;
    // share = ceil(3 backlogged / 3 lanes) = 1
    expect(planned(planRead(held, busy, settings))).toEqual([
      [1, 500],
      [4, MIN_TAKE],
    ]);
    expect(planRead(held, () => true, settings)).toEqual([]);
  });

  it('reads one row at a time from an unclean partition', () => {
    expect(planned(planRead([entry(0, { unclean: 3, backlog: true }), entry(1, { unclean: 3 })], none, settings))).toEqual([
      [0, 1],
      [1, 1],
    ]);
  });
});

describe('lanesNow', () => {
  it('lets every lane publish while some partition has a backlog, and one batch at a time without', () => {
    expect(lanesNow([entry(0), entry(1)], 3)).toBe(1);
    expect(lanesNow([], 3)).toBe(1);
    // busy or not: a backlogged partition in flight still wants the next share read beside it
    expect(lanesNow([entry(0), entry(1, { backlog: true })], 3)).toBe(3);
    // a draining partition is no longer read, so its backlog is not this relay's
    expect(lanesNow([entry(0), entry(1, { backlog: true, draining: true })], 3)).toBe(1);
  });
});

describe('PublishLanes', () => {
  const quiet = [entry(0), entry(1)];

  it('refuses a second batch without a backlog until the first has published for slowAfterMs, and sets the alarm then', () => {
    const lanes = new PublishLanes(3, 250);
    expect(lanes.refuses(quiet, 0)).toBe(false);
    const end = lanes.begin(1000);
    expect(lanes.publishing).toBe(1);
    expect(lanes.refuses(quiet, 1100)).toBe(true);
    expect(lanes.alarmAt).toBe(1250);
    expect(lanes.rang(1249)).toBe(false);
    expect(lanes.rang(1250)).toBe(true);
    expect(lanes.alarmAt).toBe(Number.POSITIVE_INFINITY);
    // slow now: every lane opens, and no alarm is needed
    expect(lanes.refuses(quiet, 1250)).toBe(false);
    end();
    expect(lanes.publishing).toBe(0);
  });

  it('with a backlog opens every lane at once; with every lane in use refuses without an alarm (a batch that ends wakes the relay)', () => {
    const lanes = new PublishLanes(2, 250);
    const backlog = [entry(0), entry(1, { backlog: true })];
    lanes.begin(0);
    expect(lanes.refuses(backlog, 10)).toBe(false);
    lanes.begin(10);
    expect(lanes.refuses(backlog, 20)).toBe(true);
    expect(lanes.refuses(quiet, 10_000)).toBe(true);
    expect(lanes.alarmAt).toBe(Number.POSITIVE_INFINITY);
  });

  it('clears the alarm when a batch ends, and counts the oldest batch still publishing', () => {
    const lanes = new PublishLanes(3, 250);
    const first = lanes.begin(0);
    expect(lanes.refuses(quiet, 100)).toBe(true);
    first();
    expect(lanes.alarmAt).toBe(Number.POSITIVE_INFINITY);
    lanes.begin(500);
    expect(lanes.refuses(quiet, 600)).toBe(true);
    expect(lanes.alarmAt).toBe(750);
  });
});

describe('cameBackFull', () => {
  const message = (partition: number, source: PartitionMessage['source']) => ({ partition, source }) as PartitionMessage;
  it('is full when any one branch of that partition returned its limit', () => {
    const messages = [message(1, 'fresh'), message(1, 'fresh'), message(2, 'due'), message(2, 'recheck'), message(3, 'recheck'), message(3, 'recheck')];
    expect(cameBackFull(rowsByBranch(messages).get(1), 2)).toBe(true);
    expect(cameBackFull(rowsByBranch(messages).get(2), 2)).toBe(false);
    expect(cameBackFull(rowsByBranch(messages).get(3), 2)).toBe(true);
    expect(cameBackFull(rowsByBranch(messages).get(4), 2)).toBe(false);
  });
});
