import { describe, expect, it } from 'vitest';
import { TopicPauses } from '../../src/core/topic-pauses.js';

describe('TopicPauses', () => {
  it('holds nothing that was never paused', () => {
    const pauses = new TopicPauses(500, 4000);
    expect(pauses.remainingMs('orders', 0)).toBe(0);
    expect(pauses.resume('orders', 0)).toBeUndefined();
    expect(pauses.reason('orders')).toBeUndefined();
  });

  it('starts an episode once, then doubles the pause after each failed probe, up to the maximum', () => {
    const pauses = new TopicPauses(500, 1500);
    expect(pauses.pause('orders', 'no route', 0)).toEqual({ delayMs: 500, started: true });
    expect(pauses.remainingMs('orders', 200)).toBe(300);
    expect(pauses.reason('orders')).toBe('no route');
    // Another publish that failed while the pause runs changes nothing.
    expect(pauses.pause('orders', 'no route', 300)).toEqual({ delayMs: 200, started: false });
    expect(pauses.remainingMs('orders', 500)).toBe(0); // ran out: the next publish probes
    expect(pauses.pause('orders', 'no route', 500)).toEqual({ delayMs: 1000, started: false });
    expect(pauses.pause('orders', 'no route', 1500)).toEqual({ delayMs: 1500, started: false });
    expect(pauses.pause('orders', 'no route', 3000)).toEqual({ delayMs: 1500, started: false });
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
