import { describe, expect, it } from 'vitest';
import { completionOf, skippedOutcomes, type UnwrittenOutcome, withUnwritten } from '../../../src/core/partition-relay/unwritten-outcomes.js';
import { splitWaiting } from '../../../src/core/partition-relay/publish-plan.js';
import { partitionMessage as m } from './partition-messages.js';

const never = () => false;

describe('outcomes the store skipped (a row locked by another session)', () => {
  it('keeps exactly the skipped outcomes, with their key and seq, and writes them again as one completion', () => {
    const [a, b, c] = [m(1, { key: 'k' }), m(2, { key: 'k' }), m(3, { key: 'j' })];
    const completion = {
      partition: 0,
      epoch: '4',
      published: [a.id],
      failed: [{ id: b.id, error: 'boom', retryInMs: 500 }],
      held: [{ id: c.id, delayMs: 50, reason: 'waits' }],
    };
    const byId = new Map([a, b, c].map((x) => [x.id, x]));
    const kept = skippedOutcomes(completion, [a.id, b.id], (id) => byId.get(id));
    expect([...kept.entries()]).toEqual([
      [a.id, { key: 'k', seq: '1', kind: 'published' }],
      [b.id, { key: 'k', seq: '2', kind: 'failed', failure: { id: b.id, error: 'boom', retryInMs: 500 } }],
    ]);
    expect(completionOf(0, '4', kept)).toEqual({
      partition: 0,
      epoch: '4',
      published: [a.id],
      failed: [{ id: b.id, error: 'boom', retryInMs: 500 }],
      held: [],
    });
  });

  it('never publishes a row again while its outcome is unwritten', () => {
    const a = m(1, { key: 'k' });
    const unwritten = new Map<string, UnwrittenOutcome>([[a.id, { key: 'k', seq: '1', kind: 'published' }]]);
    expect(withUnwritten([a, m(2, { key: 'k' })], unwritten, 100).map((x) => x.seq)).toEqual(['2']);
  });

  it('holds the later rows of a key behind an unwritten failure, but not behind an unwritten publish', () => {
    const unwritten = new Map<string, UnwrittenOutcome>([
      ['f', { key: 'k', seq: '5', kind: 'failed', failure: { id: 'f', error: 'boom', retryInMs: 100 } }],
      ['p', { key: 'j', seq: '6', kind: 'published' }],
    ]);
    const read = withUnwritten([m(4, { key: 'k' }), m(7, { key: 'k' }), m(8, { key: 'j' }), m(9)], unwritten, 100);
    expect(read.map((x) => [x.seq, x.waitsFor])).toEqual([
      ['4', null],
      ['7', { seq: '5', dueInMs: 100 }],
      ['8', null],
      ['9', null],
    ]);
    const { ready, held } = splitWaiting(read, never);
    expect(ready.map((x) => x.seq)).toEqual(['4', '8', '9']);
    expect(held.map((x) => x.id)).toEqual([m(7).id]);
  });

  it('keeps a nearer blocker the store named, and replaces a farther one', () => {
    const unwritten = new Map<string, UnwrittenOutcome>([['h', { key: 'k', seq: '5', kind: 'held', held: { id: 'h', delayMs: 0, reason: null } }]]);
    const nearer = m(9, { key: 'k', waitsFor: { seq: '7', dueInMs: 30 } });
    const farther = m(10, { key: 'k', waitsFor: { seq: '3', dueInMs: 30 } });
    expect(withUnwritten([nearer, farther], unwritten, 100).map((x) => x.waitsFor)).toEqual([
      { seq: '7', dueInMs: 30 },
      { seq: '5', dueInMs: 100 },
    ]);
  });
});
