import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { ClaimOutcome } from '../../src/core/publish-claim.js';
import { TopicPauses } from '../../src/core/topic-pauses.js';
import { FakePublisher, ids, msg, permanent, run, tick } from './publish-claim-fixtures.js';

describe('publishClaim: a missing destination pauses its topic', () => {
  const noRoute = (m: OutboxMessage) => new PublishError('OUTBOXER_UNROUTABLE', `no route for ${m.id}`);
  const heldIds = (outcome: ClaimOutcome, topic: string) => ids(outcome.held.get(topic)?.messages ?? []);

  it('holds the message and the rest of its key uncounted, reports the pause once, and lets other topics flow', async () => {
    const a1 = msg('a', { topic: 'gone' }),
      a2 = msg('a', { topic: 'orders' }),
      b1 = msg('b', { topic: 'gone' });
    const c1 = msg('c', { topic: 'orders' }),
      u1 = msg(null, { topic: 'orders' });
    const publisher = new FakePublisher((m) => (m.topic === 'gone' ? Promise.reject(noRoute(m)) : tick()));
    const outcome = await run([a1, a2, b1, c1, u1], publisher, { errorBackoffMs: 400, maxErrorBackoffMs: 4000 });
    expect(ids(outcome.published).sort()).toEqual([c1.id, u1.id].sort());
    expect(heldIds(outcome, 'gone').sort()).toEqual([a1.id, a2.id, b1.id].sort());
    // the held rows say since when the destination is missing, from the very first hold (what operators read)
    expect(outcome.held.get('gone')).toMatchObject({
      delayMs: 400,
      error: expect.stringMatching(/^destination missing since \S+Z: OUTBOXER_UNROUTABLE: no route for /),
    });
    expect(outcome.failed).toEqual([]); // no attempt counted, nothing parked
    expect(outcome.released).toEqual([]);
    expect(outcome.brokerUnavailable).toBeUndefined();
    expect(outcome.topicEvents).toEqual([{ kind: 'paused', topic: 'gone', error: expect.stringContaining('OUTBOXER_UNROUTABLE'), retryInMs: 400 }]);
    expect(ids(publisher.started)).not.toContain(a2.id); // a2 may not overtake a1
  });

  it('holds a message of a paused topic even past maxAttempts: a hold never parks it', async () => {
    const pauses = new TopicPauses(60_000, 60_000);
    pauses.pause('gone', 'OUTBOXER_NO_STREAM: no stream', performance.now());
    const worn = msg('a', { topic: 'gone', attempts: 4, lastError: 'OUTBOXER_LEASE_EXPIRED: lease taken over' });
    const publisher = new FakePublisher();
    const outcome = await run([worn], publisher, {}, { pauses });
    expect(publisher.started).toEqual([]);
    expect(outcome.failed).toEqual([]);
    expect(heldIds(outcome, 'gone')).toEqual([worn.id]);
  });

  it('holds a paused topic without publishing until the pause runs out, then probes and resumes', async () => {
    const pauses = new TopicPauses(60_000, 60_000);
    pauses.pause('gone', 'OUTBOXER_NO_STREAM: no stream', performance.now(), Date.parse('2026-11-25T16:30:00.000Z'));
    const m1 = msg('a', { topic: 'gone' });
    const publisher = new FakePublisher();
    const held = await run([m1], publisher, {}, { pauses });
    expect(publisher.started).toEqual([]);
    expect(heldIds(held, 'gone')).toEqual([m1.id]);
    expect(held.held.get('gone')?.error).toBe('destination missing since 2026-11-25T16:30:00.000Z: OUTBOXER_NO_STREAM: no stream');
    expect(held.topicEvents).toEqual([]); // the episode was reported when it began

    const probing = new TopicPauses(1, 1);
    probing.pause('gone', 'no stream', performance.now() - 10);
    const resumed = await run([m1], publisher, {}, { pauses: probing });
    expect(ids(resumed.published)).toEqual([m1.id]);
    expect(resumed.topicEvents).toEqual([{ kind: 'resumed', topic: 'gone', pausedMs: expect.any(Number) }]);
    expect(probing.size).toBe(0);
  });

  it('a failed probe pauses again for longer, without a second report', async () => {
    const pauses = new TopicPauses(1, 1000);
    pauses.pause('gone', 'no route', performance.now() - 10);
    const outcome = await run([msg('a', { topic: 'gone' })], new FakePublisher((m) => Promise.reject(noRoute(m))), {}, { pauses });
    expect(outcome.topicEvents).toEqual([]);
    expect(outcome.held.get('gone')?.delayMs).toBe(2);
  });

  it('parks faults of the message itself as dead even on a paused relay, and releases on a broker outage', async () => {
    const big = msg('a'),
      down = msg('b'),
      after = msg('b');
    const publisher = new FakePublisher((m) =>
      m.id === big.id ? Promise.reject(permanent(m)) : Promise.reject(new PublishError('OUTBOXER_BROKER_UNAVAILABLE', 'refused')),
    );
    const outcome = await run([big, down, after], publisher);
    expect(outcome.failed.map((f) => f.failure)).toEqual([{ id: big.id, error: expect.stringContaining('TOO_LARGE'), dead: true }]);
    expect(ids(outcome.released)).toEqual([down.id, after.id]);
    expect(outcome.held.size).toBe(0);
    expect(outcome.brokerUnavailable).toContain('OUTBOXER_BROKER_UNAVAILABLE');
  });
});
