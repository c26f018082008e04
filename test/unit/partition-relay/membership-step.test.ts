import { describe, expect, it } from 'vitest';
import { newOwner } from '../../../src/core/partitions/settlement.js';
import { beatVerdict, grantsClosed, groupShape, nextShareStep, peerExpiryAt } from '../../../src/core/partition-relay/membership-step.js';
import type { PartitionEntry } from '../../../src/core/partition-relay/partition-book.js';
import type { LiveRelay, Membership } from '../../../src/core/ports.js';

const timing = { leaseMs: 3000, publishTimeoutMs: 1000 };
const relay = (id: string, held: number, fields: Partial<LiveRelay> = {}): LiveRelay => ({
  id,
  name: id,
  leaving: false,
  held,
  expiresInMs: 3000,
  trouble: null,
  ...fields,
});
const membership = (fields: Partial<Membership> = {}): Membership => ({
  relayId: 'b',
  alive: true,
  relays: [],
  owned: [],
  grantable: 0,
  config: { partitionCount: 8, generation: 1, resizeTo: null, grantsOpen: true },
  ...fields,
});
const book = (...partitions: number[]) =>
  new Map(
    partitions.map((p): [number, PartitionEntry] => [
      p,
      { partition: p, epoch: '1', unclean: 0, draining: false, settlement: newOwner, unwritten: new Map(), unwrittenRetryAt: 0, readAt: 0, backlog: false },
    ]),
  );

describe('beatVerdict', () => {
  it('rejoins when the lease ran out, trusts a reply back before 0.8 of the lease from its send, not after', () => {
    expect(beatVerdict(0, 100, { alive: false }, timing)).toBe('rejoin');
    expect(beatVerdict(1000, 1000 + 2400, { alive: true }, timing)).toBe('trusted');
    expect(beatVerdict(1000, 1000 + 2401, { alive: true }, timing)).toBe('late');
  });
});

describe('grantsClosed', () => {
  it('is closed while a resize waits, open otherwise', () => {
    expect(grantsClosed(membership({ config: { partitionCount: 8, generation: 1, resizeTo: 16, grantsOpen: false } }))).toBe(true);
    expect(grantsClosed(membership())).toBe(false);
  });
});

describe('nextShareStep', () => {
  it('acquires up to the fair share, at most what is grantable', () => {
    expect(nextShareStep(membership({ relays: [relay('a', 4), relay('b', 0)], grantable: 4 }), book())).toEqual({ kind: 'acquire', count: 4 });
    expect(nextShareStep(membership({ relays: [relay('a', 4), relay('b', 0)], grantable: 1 }), book())).toEqual({ kind: 'acquire', count: 1 });
  });

  it('drains the highest partitions above the share', () => {
    expect(nextShareStep(membership({ relays: [relay('a', 0), relay('b', 8)], grantable: 0 }), book(0, 1, 2, 3, 4, 5, 6, 7))).toEqual({
      kind: 'drain',
      partitions: [7, 6, 5, 4],
    });
  });

  it('leaves relays that are leaving out of the shares, and counts my own holding from memory', () => {
    const m = membership({ relays: [relay('a', 8, { leaving: true }), relay('b', 0)], grantable: 8 });
    expect(nextShareStep(m, book(0, 1))).toEqual({ kind: 'acquire', count: 6 });
  });

  it('takes no step while grants are closed, or when I am not among the live relays', () => {
    expect(
      nextShareStep(
        membership({ relays: [relay('b', 0)], grantable: 8, config: { partitionCount: 8, generation: 1, resizeTo: 16, grantsOpen: false } }),
        book(),
      ),
    ).toEqual({ kind: 'none' });
    expect(nextShareStep(membership({ relays: [relay('a', 0)], grantable: 8 }), book())).toEqual({ kind: 'none' });
  });
});

describe('peerExpiryAt', () => {
  it('is the earliest peer expiry after the reply, plus the margin; never my own', () => {
    const m = membership({ relays: [relay('a', 1, { expiresInMs: 900 }), relay('b', 1, { expiresInMs: 10 }), relay('c', 1, { expiresInMs: 2000 })] });
    expect(peerExpiryAt(m, 5000, 50)).toBe(5950);
    expect(peerExpiryAt(membership({ relays: [relay('b', 1)] }), 5000, 50)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('nextShareStep with broker trouble', () => {
  it('gives a relay in trouble no share while a healthy relay is live: it drains all it holds', () => {
    const m = membership({ relays: [relay('a', 4), relay('b', 4)] });
    expect(nextShareStep(m, book(0, 1, 2, 3), true)).toEqual({ kind: 'drain', partitions: [3, 2, 1, 0] });
  });

  it('lets a healthy relay take what a relay in trouble gave back', () => {
    const m = membership({ relays: [relay('a', 0, { trouble: 'broker unreachable' }), relay('b', 4)], grantable: 4 });
    expect(nextShareStep(m, book(4, 5, 6, 7))).toEqual({ kind: 'acquire', count: 4 });
  });

  it('drains nothing when every relay is in trouble, and takes free partitions only up to the fair share', () => {
    const m = membership({ relays: [relay('a', 4, { trouble: 'broker unreachable' }), relay('b', 4)] });
    expect(nextShareStep(m, book(4, 5, 6, 7), true)).toEqual({ kind: 'none' });
    const lopsided = membership({ relays: [relay('a', 8, { trouble: 'broker unreachable' }), relay('b', 0, { trouble: 'broker unreachable' })] });
    expect(nextShareStep({ ...lopsided, relayId: 'a' }, book(0, 1, 2, 3, 4, 5, 6, 7), true)).toEqual({ kind: 'none' });
    const freed = membership({ relays: [relay('a', 4, { trouble: 'broker unreachable' }), relay('b', 0)], grantable: 4 });
    expect(nextShareStep(freed, book(), true)).toEqual({ kind: 'acquire', count: 4 });
  });

  it('gives a relay back its share once its broker is reachable again', () => {
    const m = membership({ relays: [relay('a', 8), relay('b', 0)], grantable: 0 });
    expect(nextShareStep(m, book(), false)).toEqual({ kind: 'none' });
    const holder = membership({ relayId: 'a', relays: [relay('a', 8), relay('b', 0)] });
    expect(nextShareStep(holder, book(0, 1, 2, 3, 4, 5, 6, 7))).toEqual({ kind: 'drain', partitions: [7, 6, 5, 4] });
  });
});

describe('groupShape', () => {
  it('changes with a join, a leave, leaving, trouble and the grantable count, not with expiries or holdings', () => {
    const base = membership({ relays: [relay('a', 4), relay('b', 4)], grantable: 0 });
    const shape = groupShape(base);
    expect(groupShape({ ...base, relays: [relay('a', 3, { expiresInMs: 10 }), relay('b', 5)] })).toBe(shape);
    expect(groupShape({ ...base, relays: [relay('a', 4), relay('b', 4), relay('c', 0)] })).not.toBe(shape);
    expect(groupShape({ ...base, relays: [relay('a', 4)] })).not.toBe(shape);
    expect(groupShape({ ...base, relays: [relay('a', 4, { leaving: true }), relay('b', 4)] })).not.toBe(shape);
    expect(groupShape({ ...base, relays: [relay('a', 4, { trouble: 'down' }), relay('b', 4)] })).not.toBe(shape);
    expect(groupShape({ ...base, grantable: 4 })).not.toBe(shape);
  });
});
