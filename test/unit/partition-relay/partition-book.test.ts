import { describe, expect, it } from 'vitest';
import { newOwner } from '../../../src/core/partitions/settlement.js';
import { adoptEntry, ownPartitions, type PartitionEntry, reconcile } from '../../../src/core/partition-relay/partition-book.js';

const entry = (partition: number, epoch: string, draining = false): PartitionEntry => ({
  partition,
  epoch,
  unclean: 0,
  draining,
  settlement: newOwner,
  unwritten: new Map(),
  unwrittenRetryAt: 0,
  readAt: 0,
  backlog: false,
});
const held = (partition: number, epoch: string, state: 'owned' | 'draining' = 'owned') => ({ partition, epoch, unclean: 0, state });

describe('reconcile: memory follows what the database says I hold', () => {
  it('drops partitions no longer mine and those granted again at another epoch', () => {
    const book = new Map([
      [1, entry(1, '5')],
      [2, entry(2, '7')],
      [3, entry(3, '1')],
    ]);
    const { drop, adopt } = reconcile(book, [held(1, '5'), held(2, '8')]);
    expect(drop).toEqual([2, 3]);
    expect(adopt).toEqual([]);
  });

  it('adopts partitions mine in the database and missing in memory (a grant whose reply was lost)', () => {
    const { drop, adopt } = reconcile(new Map([[1, entry(1, '5')]]), [held(1, '5'), held(4, '2', 'draining')]);
    expect(drop).toEqual([]);
    expect(adopt).toEqual([held(4, '2', 'draining')]);
  });
});

describe('adoptEntry', () => {
  it('starts a new owner from the beginning, draining when the database says so', () => {
    expect(adoptEntry({ partition: 3, epoch: '9', unclean: 2 })).toEqual({
      partition: 3,
      epoch: '9',
      unclean: 2,
      draining: false,
      settlement: newOwner,
      unwritten: new Map(),
      unwrittenRetryAt: 0,
      readAt: 0,
      backlog: false,
    });
    expect(adoptEntry({ ...held(3, '9', 'draining') }).draining).toBe(true);
  });
});

describe('ownPartitions', () => {
  it('splits the book into owned and draining, for the fair-share step', () => {
    const book = new Map([
      [1, entry(1, '1')],
      [2, entry(2, '1', true)],
      [5, entry(5, '1')],
    ]);
    expect(ownPartitions(book)).toEqual({ owned: [1, 5], draining: [2] });
  });
});
