import { describe, expect, it } from 'vitest';
import { BrokerTrouble } from '../../../src/core/partition-relay/broker-trouble.js';
import type { BrokerConnectionState } from '../../../src/core/relay-health.js';

function tracker(afterMs: number, initial: BrokerConnectionState | 'unknown') {
  let state = initial;
  const trouble = new BrokerTrouble(afterMs, () => state);
  return { trouble, set: (next: BrokerConnectionState | 'unknown') => (state = next) };
}

describe('BrokerTrouble', () => {
  it('is in trouble at once when the first connection attempts fail, and out once connected', () => {
    const { trouble, set } = tracker(10_000, 'connecting');
    expect(trouble.reason(0)).toBeNull();
    set('disconnected');
    expect(trouble.reason(1)).toMatch(/has not been reachable since the relay started/);
    set('connected');
    expect(trouble.reason(2)).toBeNull();
  });

  it('after a connection, waits afterMs of disconnection before trouble, and a success in between starts over', () => {
    const { trouble, set } = tracker(10_000, 'connected');
    expect(trouble.reason(0)).toBeNull();
    set('disconnected');
    expect(trouble.reason(1_000)).toBeNull();
    expect(trouble.reason(10_999)).toBeNull();
    expect(trouble.reason(11_000)).toMatch(/unreachable for 10 s/);
    set('connected');
    expect(trouble.reason(12_000)).toBeNull();
    set('connecting');
    expect(trouble.reason(13_000)).toBeNull();
    expect(trouble.reason(22_999)).toBeNull();
    expect(trouble.reason(23_000)).not.toBeNull();
  });

  it('judges a publisher that cannot say by its publishes, and trusts it again afterMs after its trouble began', () => {
    const { trouble } = tracker(1_000, 'unknown');
    expect(trouble.reason(0)).toBeNull();
    trouble.unavailable('connection refused', 100);
    expect(trouble.reason(1_099)).toBeNull();
    expect(trouble.reason(1_100)).toMatch(/connection refused/);
    expect(trouble.reason(2_099)).not.toBeNull();
    expect(trouble.reason(2_100)).toBeNull();
    trouble.unavailable('connection refused', 2_200);
    trouble.reachable();
    expect(trouble.reason(5_000)).toBeNull();
  });

  it('trusts a publisher that cannot say again after longer and longer troubles, until the broker confirms something', () => {
    const { trouble } = tracker(1_000, 'unknown');
    let now = 0;
    const episode = () => {
      trouble.unavailable('connection refused', now);
      now += 1_000;
      expect(trouble.reason(now)).not.toBeNull();
      const began = now;
      while (trouble.reason(now) !== null) now += 100;
      return now - began;
    };
    expect([episode(), episode(), episode(), episode(), episode()]).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    trouble.reachable();
    expect(episode()).toBe(1_000);
  });
});
