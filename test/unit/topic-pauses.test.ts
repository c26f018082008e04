import { describe, expect, it } from 'vitest';
import { readRelayHold, relayHoldReason, relayPauseOf, TopicPauses } from '../../src/core/topic-pauses.js';

describe('TopicPauses', () => {
  it('holds nothing that was never paused', () => {
    const pauses = new TopicPauses(500, 4000);
    expect(pauses.remainingMs('orders', 0)).toBe(0);
    expect(pauses.resume('orders', 0)).toBeUndefined();
    expect(pauses.reason('orders')).toBeUndefined();
  });

  it('starts an episode once, then doubles the pause after each failed probe, up to the maximum', () => {
    const pauses = new TopicPauses(500, 1500);
    expect(pauses.pause('orders', 'no route', 0, Date.parse('2026-11-25T16:30:00.000Z'))).toEqual({ delayMs: 500, started: true });
    expect(pauses.remainingMs('orders', 200)).toBe(300);
    expect(pauses.reason('orders')).toBe('destination missing since 2026-11-25T16:30:00.000Z: no route');
    // Another publish that failed while the pause runs changes nothing.
    expect(pauses.pause('orders', 'no route', 300)).toEqual({ delayMs: 200, started: false });
    expect(pauses.remainingMs('orders', 500)).toBe(0); // ran out: the next publish probes
    expect(pauses.pause('orders', 'no route', 500)).toEqual({ delayMs: 1000, started: false });
    expect(pauses.pause('orders', 'no route', 1500)).toEqual({ delayMs: 1500, started: false });
    // a failed probe keeps when the episode began and takes the latest error
    expect(pauses.pause('orders', 'still no route', 3000, Date.parse('2026-11-25T16:30:03.000Z'))).toEqual({ delayMs: 1500, started: false });
    expect(pauses.reason('orders')).toBe('destination missing since 2026-11-25T16:30:00.000Z: still no route');
  });

  it('ends the episode on a confirmed publish and says how long it lasted; the next one starts afresh', () => {
    const pauses = new TopicPauses(500, 4000);
    pauses.pause('orders', 'no stream', 100);
    pauses.pause('orders', 'no stream', 700);
    expect(pauses.resume('orders', 2100)).toBe(2000);
    expect(pauses.remainingMs('orders', 2100)).toBe(0);
    expect(pauses.size).toBe(0);
    expect(pauses.pause('orders', 'no stream', 3000)).toEqual({ delayMs: 500, started: true });
  });

  it('pauses topics independently', () => {
    const pauses = new TopicPauses(500, 4000);
    pauses.pause('a', 'no route', 0);
    expect(pauses.remainingMs('a', 100)).toBe(400);
    expect(pauses.remainingMs('b', 100)).toBe(0);
  });
});

describe('TopicPauses: operator pauses', () => {
  const paused = (...topics: string[]) => topics.map((topic) => ({ topic, reason: `maintenance of ${topic}` }));

  it('holds an operator-paused topic in windows that double from the base up to the maximum, counted from when the relay saw the pause, and never says 0', () => {
    const pauses = new TopicPauses(500, 4000);
    pauses.setOperatorPauses(paused('orders'), 1000);
    // windows: [0, 500), [500, 1500), [1500, 3500), [3500, 7500), then 4000 each
    expect(pauses.remainingMs('orders', 1000)).toBe(500);
    expect(pauses.remainingMs('orders', 1499)).toBe(1);
    expect(pauses.remainingMs('orders', 1500)).toBe(1000);
    expect(pauses.remainingMs('orders', 2600)).toBe(1900);
    expect(pauses.remainingMs('orders', 1000 + 3500)).toBe(4000);
    expect(pauses.remainingMs('orders', 1000 + 7500)).toBe(4000);
    expect(pauses.remainingMs('orders', 1000 + 7500 + 10 * 4000 + 1)).toBe(3999);
    for (let t = 1000; t < 60_000; t += 37) expect(pauses.remainingMs('orders', t)).toBeGreaterThan(0);
  });

  it('says the operator reason, which wins over a missing destination while both hold, and leaves the destination episode to run on after a resume', () => {
    const pauses = new TopicPauses(500, 4000);
    pauses.pause('orders', 'OUTBOXER_UNROUTABLE: no route', 0, Date.parse('2026-11-25T16:30:00.000Z'));
    pauses.setOperatorPauses(paused('orders'), 100);
    expect(pauses.reason('orders')).toBe('paused by an operator: maintenance of orders');
    expect(pauses.remainingMs('orders', 10_000)).toBeGreaterThan(0); // no probe while an operator holds it
    expect(pauses.setOperatorPauses([], 10_000)).toEqual({ paused: [], resumed: ['orders'] });
    expect(pauses.reason('orders')).toBe('destination missing since 2026-11-25T16:30:00.000Z: OUTBOXER_UNROUTABLE: no route');
    expect(pauses.remainingMs('orders', 10_000)).toBe(0); // the destination pause ran out: the next publish probes
    expect(pauses.resume('orders', 10_000)).toBe(10_000);
  });

  it('reports which topics a new list paused and resumed, keeps the windows of those still listed, and takes a changed reason', () => {
    const pauses = new TopicPauses(500, 4000);
    expect(pauses.setOperatorPauses(paused('b', 'a'), 0)).toEqual({ paused: ['a', 'b'], resumed: [] });
    expect(
      pauses.setOperatorPauses(
        [
          { topic: 'a', reason: 'other' },
          { topic: 'c', reason: '' },
        ],
        600,
      ),
    ).toEqual({ paused: ['c'], resumed: ['b'] });
    expect(pauses.remainingMs('a', 600)).toBe(900); // still in its second window, counted from 0
    expect(pauses.remainingMs('c', 600)).toBe(500); // a first window of its own
    expect(pauses.reason('a')).toBe('paused by an operator: other');
    expect(pauses.reason('c')).toBe('paused by an operator');
    expect(pauses.isOperatorPaused('b')).toBe(false);
    expect(pauses.remainingMs('b', 600)).toBe(0);
    expect(
      pauses.setOperatorPauses(
        [
          { topic: 'a', reason: 'other' },
          { topic: 'c', reason: '' },
        ],
        700,
      ),
    ).toEqual({ paused: [], resumed: [] });
  });

  it('lists operator pauses with missing destinations, sorted and once each; size counts destination episodes only', () => {
    const pauses = new TopicPauses(500, 4000);
    pauses.pause('z', 'no stream', 0);
    pauses.pause('m', 'no stream', 0);
    pauses.setOperatorPauses(paused('m', 'a'), 0);
    expect(pauses.topics()).toEqual(['a', 'm', 'z']);
    expect(pauses.size).toBe(2);
    expect(pauses.isOperatorPaused('a')).toBe(true);
    expect(pauses.isOperatorPaused('z')).toBe(false);
  });
});

describe('relay holds in last_error: what any process reads of a missing destination', () => {
  const since = new Date('2026-11-25T16:30:00.000Z');

  it('writes the episode start before the error, and reads both back; any other text is no relay hold', () => {
    const text = relayHoldReason(since, 'OUTBOXER_UNROUTABLE: no queue is bound: "a: b"\nsecond line');
    expect(text).toBe('destination missing since 2026-11-25T16:30:00.000Z: OUTBOXER_UNROUTABLE: no queue is bound: "a: b"\nsecond line');
    expect(readRelayHold(text)).toEqual({ since, error: 'OUTBOXER_UNROUTABLE: no queue is bound: "a: b"\nsecond line' });
    for (const other of [
      null,
      undefined,
      '',
      'OUTBOXER_UNROUTABLE: no route',
      'paused by an operator: destination missing since 2026-11-25T16:30:00.000Z: x',
      'destination missing since yesterday: x',
      'destination missing since 2026-13-45T16:30:00.000Z: x',
    ]) {
      expect(readRelayHold(other), String(other)).toBeUndefined();
    }
  });

  it('sorts by the time, so the smallest text of a topic is its earliest episode and the largest its latest', () => {
    const texts = [
      relayHoldReason(new Date('2026-11-25T16:31:00.000Z'), 'A: later'),
      relayHoldReason(since, 'Z: earlier'),
      relayHoldReason(new Date('2026-11-26T09:00:00.000Z'), 'B: latest'),
    ];
    const sorted = [...texts].sort();
    expect(relayPauseOf(3, sorted[0] as string, sorted[2] as string)).toEqual({ since, reason: 'B: latest', held: 3 });
    expect(relayPauseOf(0, null, null)).toBeNull();
    expect(relayPauseOf(2, 'not a hold', 'not a hold')).toBeNull();
  });
});

describe('TopicPauses.pausedDestinations', () => {
  it('names the destinations held as a whole while their pause runs, not topics nor expired pauses', () => {
    const pauses = new TopicPauses(1000, 8000);
    pauses.pause('*@partner', 'OUTBOXER_BROKER_UNAVAILABLE: down', 0);
    pauses.pause('*@ledger', 'OUTBOXER_BROKER_UNAVAILABLE: down', -2000);
    pauses.pause('orders@analytics', 'OUTBOXER_NO_STREAM: none', 0);
    pauses.pause('*@default', 'OUTBOXER_BROKER_UNAVAILABLE: down', 0);
    expect(pauses.pausedDestinations(10)).toEqual(['default', 'partner']);
    expect(pauses.pausedDestinations(1000)).toEqual([]);
  });
});

describe('TopicPauses: operator pauses of whole destinations', () => {
  const paused = (...topics: string[]) => topics.map((topic) => ({ topic, reason: `maintenance of ${topic}` }));
  const destinations = (...names: string[]) => names.map((destination) => ({ destination, reason: `maintenance of ${destination}` }));

  it('keeps a destination pause under its pause key, with the operator reason, in the same doubling windows, never 0', () => {
    const pauses = new TopicPauses(500, 2000);
    expect(pauses.setOperatorPauses([], 1000, destinations('partner'))).toEqual({ paused: ['*@partner'], resumed: [] });
    expect(pauses.isOperatorPaused('*@partner')).toBe(true);
    expect(pauses.isOperatorPaused('partner')).toBe(false); // a topic named like the destination is not paused
    expect(pauses.reason('*@partner')).toBe('paused by an operator: maintenance of partner');
    expect(pauses.remainingMs('*@partner', 1200)).toBe(300);
    expect(pauses.remainingMs('*@partner', 1000 + 500 + 1000 + 2000 * 50)).toBeGreaterThan(0);
  });

  it('tells topic and destination pauses apart in one list, and resumes each on its own', () => {
    const pauses = new TopicPauses(500, 2000);
    expect(pauses.setOperatorPauses(paused('orders'), 0, destinations('partner', 'default'))).toEqual({
      paused: ['*@default', '*@partner', 'orders'],
      resumed: [],
    });
    expect(pauses.setOperatorPauses(paused('orders'), 10, destinations('default'))).toEqual({ paused: [], resumed: ['*@partner'] });
    expect(pauses.setOperatorPauses([], 20)).toEqual({ paused: [], resumed: ['*@default', 'orders'] }); // a store without destination pauses lists none
    expect(pauses.topics()).toEqual([]);
  });

  it('never reads a paused topic spelled like a pause key as a destination pause', () => {
    const pauses = new TopicPauses(500, 2000);
    pauses.setOperatorPauses([{ topic: '*@partner', reason: '' }], 0);
    expect(pauses.isOperatorPaused('*@partner')).toBe(false);
    expect(pauses.pausedDestinations(0)).toEqual([]);
  });

  it('names operator-paused destinations among the destinations held as a whole until resumed, and says who holds each', () => {
    const pauses = new TopicPauses(1000, 8000);
    pauses.pause('*@ledger', 'OUTBOXER_BROKER_UNAVAILABLE: down', 0);
    pauses.pause('*@partner', 'OUTBOXER_BROKER_UNAVAILABLE: down', 0);
    pauses.setOperatorPauses([], 0, destinations('partner', 'default'));
    expect(pauses.pausedDestinations(10)).toEqual(['default', 'ledger', 'partner']);
    expect(pauses.pausedDestinations(1_000_000)).toEqual(['default', 'partner']); // the relay's pause ran out, the operator's did not
    expect(pauses.destinationHolds()).toEqual([
      { destination: 'default', by: 'operator' },
      { destination: 'ledger', by: 'relay' },
      { destination: 'partner', by: 'operator' },
    ]);
    pauses.setOperatorPauses([], 1_000_000);
    expect(pauses.pausedDestinations(1_000_000)).toEqual([]);
    expect(pauses.destinationHolds()).toEqual([
      { destination: 'ledger', by: 'relay' },
      { destination: 'partner', by: 'relay' },
    ]);
  });
});
