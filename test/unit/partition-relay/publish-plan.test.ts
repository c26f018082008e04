import { describe, expect, it } from 'vitest';
import type { ClaimOutcome } from '../../../src/core/publish-claim.js';
import { completionsFrom, MIN_HOLD_MS, splitWaiting, uncounted } from '../../../src/core/partition-relay/publish-plan.js';
import { dueBranchFull } from '../../../src/core/partition-relay/publish-batch.js';
import type { PartitionMessage } from '../../../src/core/ports.js';
import { partitionMessage as m } from './partition-messages.js';

const never = () => false;
const emptyOutcome = (): ClaimOutcome => ({ published: [], failed: [], released: [], held: new Map(), topicEvents: [] });

describe('splitWaiting: a key waits for its earlier scheduled row', () => {
  it('lets a message go right after its blocker when the blocker is in the batch', () => {
    const blocker = m(1, { key: 'k', source: 'due' });
    const waiting = m(5, { key: 'k', waitsFor: { seq: '1', dueInMs: 0 } });
    expect(splitWaiting([blocker, waiting], never)).toEqual({ ready: [blocker, waiting], held: [] });
  });

  it('holds a message whose blocker is not in the batch, and every later one of its key, for the time the blocker has left', () => {
    const waiting = m(5, { key: 'k', waitsFor: { seq: '1', dueInMs: 800 } });
    const later = m(6, { key: 'k' });
    const other = m(7, { key: 'o' });
    const { ready, held } = splitWaiting([waiting, later, other], never);
    expect(ready).toEqual([other]);
    expect(held.map((h) => [h.id, h.delayMs])).toEqual([
      [waiting.id, 800],
      [later.id, 800],
    ]);
    expect(held[0]?.reason).toContain('seq 1');
  });

  it('holds at least MIN_HOLD_MS when the blocker is already due', () => {
    const { held } = splitWaiting([m(5, { key: 'k', waitsFor: { seq: '1', dueInMs: 0 } })], never);
    expect(held[0]?.delayMs).toBe(MIN_HOLD_MS);
  });

  it('does not trust a blocker in the batch when the due branch came back full (rows between may have been cut)', () => {
    const blocker = m(1, { key: 'k', source: 'due' });
    const waiting = m(5, { key: 'k', waitsFor: { seq: '1', dueInMs: 0 } });
    const { ready, held } = splitWaiting([blocker, waiting], (message) => message.partition === 0);
    expect(ready).toEqual([blocker]);
    expect(held.map((h) => h.id)).toEqual([waiting.id]);
  });

  it('never holds unkeyed messages', () => {
    const unkeyed = [m(1), m(2)];
    expect(splitWaiting(unkeyed, never).ready).toEqual(unkeyed);
  });
});

describe('completionsFrom: one completion per partition', () => {
  it('writes published, failed and held messages under each partition epoch', () => {
    const a = m(1, { partition: 0 });
    const b = m(2, { partition: 3, topic: 'gone' });
    const c = m(3, { partition: 3 });
    const outcome = emptyOutcome();
    outcome.published.push(a);
    outcome.held.set('gone', { messages: [b], delayMs: 500, error: 'no route' });
    outcome.failed.push({ message: c, failure: { id: c.id, error: 'nack', dead: true } });
    const results = completionsFrom([a, b, c], outcome, [], (p) => `e${p}`);
    expect(results).toEqual([
      { completion: { partition: 0, epoch: 'e0', published: [a.id], failed: [], held: [] }, reread: false },
      {
        completion: {
          partition: 3,
          epoch: 'e3',
          published: [],
          failed: [{ id: c.id, error: 'nack', dead: true }],
          held: [{ id: b.id, delayMs: 500, reason: 'no route' }],
        },
        reread: false,
      },
    ]);
  });

  it('holds the messages released behind a retried failure of their key until it is due again', () => {
    const first = m(1, { key: 'k' });
    const second = m(2, { key: 'k' });
    const outcome = emptyOutcome();
    outcome.failed.push({ message: first, failure: { id: first.id, error: 'nack', retryInMs: 2000 } });
    outcome.released.push(second);
    const [result] = completionsFrom([first, second], outcome, [], () => '1');
    expect(result?.completion.held).toEqual([{ id: second.id, delayMs: 2000, reason: expect.stringContaining(first.id) as string }]);
    expect(result?.reread).toBe(false);
  });

  it('writes nothing for messages released for other reasons (broker down, lease short, stopping): their partition is read again', () => {
    const released = m(1, { key: 'k', partition: 2 });
    const published = m(2, { partition: 2 });
    const outcome = emptyOutcome();
    outcome.released.push(released);
    outcome.published.push(published);
    outcome.brokerUnavailable = 'down';
    const [result] = completionsFrom([released, published], outcome, [], () => '1');
    expect(result).toEqual({ completion: { partition: 2, epoch: '1', published: [published.id], failed: [], held: [] }, reread: true });
  });

  it('includes the holds decided before publishing', () => {
    const waiting = m(4, { key: 'k', partition: 1 });
    const [result] = completionsFrom([waiting], emptyOutcome(), [{ id: waiting.id, partition: 1, delayMs: 70, reason: 'r' }], () => '9');
    expect(result?.completion.held).toEqual([{ id: waiting.id, delayMs: 70, reason: 'r' }]);
  });
});

describe('uncounted', () => {
  it('writes retried failures as holds for their backoff with their error, keeps parked ones, and changes nothing else', () => {
    const completion = {
      partition: 1,
      epoch: '2',
      published: ['p'],
      failed: [
        { id: 'r', error: 'nack', retryInMs: 900 },
        { id: 'd', error: 'too large', dead: true as const },
      ],
      held: [{ id: 'h', delayMs: 50, reason: null }],
    };
    expect(uncounted(completion)).toEqual({
      partition: 1,
      epoch: '2',
      published: ['p'],
      failed: [{ id: 'd', error: 'too large', dead: true }],
      held: [
        { id: 'h', delayMs: 50, reason: null },
        { id: 'r', delayMs: 900, reason: 'nack' },
      ],
    });
    const clean = { partition: 1, epoch: '2', published: ['p'], failed: [], held: [] };
    expect(uncounted(clean)).toBe(clean);
  });
});

describe('dueBranchFull: which due branch a blocker came from', () => {
  const limit = () => 2;
  const partnerBacklog = [m(1, { key: 'a', source: 'due', destination: 'partner' }), m(2, { key: 'b', source: 'due', destination: 'partner' })];
  const ownBlocker = m(3, { key: 'k', source: 'due', destination: null });
  const waiting = m(9, { key: 'k', destination: null, waitsFor: { seq: '3', dueInMs: 0 } });

  it("with fan-out, counts each destination's due rows apart: another destination's full branch does not hold a fresh row", () => {
    const read = [...partnerBacklog, ownBlocker, waiting];
    const full = dueBranchFull(read, true, limit);
    expect(full(waiting)).toBe(false);
    expect(full(partnerBacklog[0] as PartitionMessage)).toBe(true);
    expect(splitWaiting(read, full).ready.map((r) => r.seq)).toEqual(['1', '2', '3', '9']);
  });

  it('without fan-out, counts the partition as one branch', () => {
    const read = [...partnerBacklog, ownBlocker, waiting];
    const full = dueBranchFull(read, false, limit);
    expect(full(waiting)).toBe(true);
    expect(splitWaiting(read, full).held.map((h) => h.id)).toEqual([waiting.id]);
  });
});
