import { describe, expect, it } from 'vitest';
import { CompletionBatcher } from '../../../src/core/partition-relay/completion-batcher.js';
import type { CompletionOutcome, PartitionCompletion } from '../../../src/core/ports.js';

const completion = (partition: number, epoch = '1'): PartitionCompletion => ({ partition, epoch, published: [`id-${partition}`], failed: [], held: [] });

describe('CompletionBatcher', () => {
  it('writes the completions of many partitions in one statement and gives each its own outcome', async () => {
    const calls: [string, number[]][] = [];
    const batcher = new CompletionBatcher(async (relayId, completions) => {
      calls.push([relayId, completions.map((c) => c.partition)]);
      return completions.map((c): CompletionOutcome => ({ partition: c.partition, epoch: c.epoch, applied: c.partition !== 2, changed: 1, skipped: [] }));
    }, 1);
    const outcomes = await Promise.all([1, 2, 3].map((p) => batcher.complete('r1', completion(p))));
    expect(calls).toEqual([['r1', [1, 2, 3]]]);
    expect(outcomes.map((o) => o.applied)).toEqual([true, false, true]);
  });

  it('writes the completions of different relay ids apart, each under its own id', async () => {
    const calls: string[] = [];
    const batcher = new CompletionBatcher(async (relayId, completions) => {
      calls.push(relayId);
      return completions.map((c) => ({ partition: c.partition, epoch: c.epoch, applied: true, changed: 1, skipped: [] }));
    }, 1);
    await Promise.all([batcher.complete('old', completion(1)), batcher.complete('new', completion(2))]);
    expect(calls.sort()).toEqual(['new', 'old']);
  });

  it('rejects every completion of a failed statement, and one the store gave no outcome for', async () => {
    const failing = new CompletionBatcher(async () => {
      throw new Error('connection reset');
    }, 1);
    await expect(failing.complete('r', completion(1))).rejects.toThrow('connection reset');
    const silent = new CompletionBatcher(async () => [], 1);
    await expect(silent.complete('r', completion(4, '7'))).rejects.toThrow(/partition 4 at epoch 7/);
  });

  it('keeps accepting completions after a write, in the next statement', async () => {
    let calls = 0;
    const batcher = new CompletionBatcher(async (_relayId, completions) => {
      calls++;
      return completions.map((c) => ({ partition: c.partition, epoch: c.epoch, applied: true, changed: 1, skipped: [] }));
    }, 1);
    await batcher.complete('r', completion(1));
    await batcher.complete('r', completion(2));
    expect(calls).toBe(2);
  });
});
