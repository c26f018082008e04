import type { RelayHealth } from '../../src/core/relay-health.js';

/** A healthy relay's `health()`: running, joined, database reachable, broker connected; `overrides` change any part. */
export function relayHealth(overrides: Partial<RelayHealth> = {}): RelayHealth {
  return {
    running: true,
    owner: 'relay-a',
    relayId: '0191d1a4-7c3e-7000-8000-00000000000a',
    partitions: [0, 1, 2],
    partitionCount: 64,
    relaysAlive: 2,
    grantsOpen: true,
    database: { reachable: true },
    broker: 'connected',
    pausedTopics: [],
    pausedDestinations: [],
    counts: { published: 0, retried: 0, dead: 0 },
    ...overrides,
  };
}
