import { describe, expect, it } from 'vitest';
import type { RelayHealth } from '../../src/core/relay-health.js';
import { relayReadiness } from '../../src/core/relay-readiness.js';
import { relayHealth } from '../support/relay-health-fixture.js';

const healthy: RelayHealth = Object.freeze(relayHealth({ relayId: '0193c2f1-0000-7000-8000-000000000001', partitions: [0, 1], partitionCount: 4 }));

const health = (change: Partial<RelayHealth>): RelayHealth => ({ ...healthy, ...change });

describe('relayReadiness', () => {
  it('is ready when running, joined, with the database reachable and the broker connected', () => {
    expect(relayReadiness(healthy)).toEqual({ ready: true, reasons: [] });
  });

  it.each([
    ['holding no partition (more relays than partitions)', { partitions: [] }],
    ['a broker reconnecting', { broker: 'connecting' }],
    ['a publisher that does not report its connection', { broker: 'unknown' }],
    ['paused topics', { pausedTopics: ['orders.created'] }],
    ['grants closed by a resize (still joined: acquiring)', { grantsOpen: false }],
  ] as const)('stays ready with %s', (_what, change) => {
    expect(relayReadiness(health(change))).toEqual({ ready: true, reasons: [] });
  });

  it.each([
    ['not running', { running: false }, ['the relay is not running']],
    ['running but not joined yet', { relayId: undefined }, ["the relay has not joined its table's group yet"]],
    ['database unreachable, with its error', { database: { reachable: false, error: 'ECONNREFUSED' } }, ['the database is unreachable']],
    ['database unreachable, no error text', { database: { reachable: false } }, ['the database is unreachable']],
    ['broker disconnected', { broker: 'disconnected' }, ['the broker is disconnected']],
  ] as const)('is not ready when %s, and says why', (_what, change, reasons) => {
    expect(relayReadiness(health(change))).toEqual({ ready: false, reasons });
  });

  it('lists every failed condition in a fixed order, "not running" standing for "not joined"', () => {
    const down = health({ running: false, relayId: undefined, database: { reachable: false, error: 'timeout' }, broker: 'disconnected' });
    expect(relayReadiness(down)).toEqual({
      ready: false,
      reasons: ['the relay is not running', 'the database is unreachable', 'the broker is disconnected'],
    });
  });

  it("never repeats the driver's error, which can name an address, a database or a user", () => {
    const error = 'OUTBOXER_DATABASE_UNAVAILABLE: connect ECONNREFUSED 10.0.0.5:5432 (database "orders", user "relay")';
    const { reasons } = relayReadiness(health({ relayId: undefined, database: { reachable: false, error } }));
    expect(reasons).toEqual(["the relay has not joined its table's group yet", 'the database is unreachable']);
    for (const part of ['ECONNREFUSED', '10.0.0.5', 'orders', 'relay"']) expect(reasons.join(' ')).not.toContain(part);
  });
});
