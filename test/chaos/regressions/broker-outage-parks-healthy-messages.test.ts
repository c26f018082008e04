/**
 * Regression, fixed: broker-unavailable failures are released uncounted and the relay backs off.
 * Found by `npm run chaos -- --set ci --seed 20261121 --scenario rabbit-broker-network` (with
 * retry.maxAttempts 12): a 3.6 s broker outage parked 11 healthy messages as dead, each with
 * "OUTBOXER_BROKER_UNAVAILABLE: ... was not sent: cannot connect to RabbitMQ". Every relay claims the
 * same heads again and again during the outage; each claim adds an attempt (sql.ts claim:
 * `attempts = u.attempts + 1`), the publish fails at once without reaching the broker, and
 * publish-claim.ts `shouldPark(options.retry, message.attempts)` parks it once the attempts run out.
 * So an outage longer than the retry budget (about 13 min with the defaults) dead-letters every message
 * that was tried, although none of them is at fault (I2: dead is for messages that cannot be published).
 * Expected: a failure that never reached the broker (not sent, cannot connect) does not consume the
 * message's attempts; the relay backs off as a whole until the broker is back.
 * Engine v1's claim rounds (a v1 table); engine v2 is held to the same rule by test/integration/relay.test.ts
 * ("rides out a broker outage longer than the retry budget").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../../src/core/errors.js';
import type { OutboxMessage } from '../../../src/core/message.js';
import { Outbox } from '../../../src/core/outbox.js';
import type { Publisher } from '../../../src/core/ports.js';
import { Relay } from '../../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../../src/stores/postgres/database.js';
import { createV1PostgresFixture } from '../../support/engine-v1-table.js';
import type { PostgresFixture } from '../../support/postgres-fixture.js';

/** A broker that is down for the first `downFor` publishes, then up. */
function brokerDownFor(downFor: number, delivered: string[]): Publisher {
  let calls = 0;
  return {
    name: 'flaky',
    capabilities: {},
    async publish(message: OutboxMessage) {
      calls++;
      if (calls <= downFor) {
        throw new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `message ${message.id} was not sent: cannot connect to the broker (connect ECONNREFUSED)`);
      }
      delivered.push(message.id);
    },
    close: async () => undefined,
  };
}

describe('a broker outage longer than the retry budget', () => {
  let fixture: PostgresFixture | undefined;
  afterEach(async () => fixture?.cleanup());

  it('parks no healthy message as dead: it is published once the broker is back', async () => {
    fixture = await createV1PostgresFixture();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const id = await fromPgPool(fixture.pool).transaction((tx) => outbox.enqueue(tx, { topic: 't.x', type: 'x', key: 'k', payload: { n: 1 } }));
    const delivered: string[] = [];
    const relay = new Relay(fixture.store, brokerDownFor(8, delivered), { engine: 'v1', leaseMs: 2000, publishTimeoutMs: 500, retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 3 } });
    let rounds = 0;
    for (; rounds < 40 && delivered.length === 0; rounds++) {
      const round = await relay.runOnce();
      expect(round.brokerUnavailable).toBe(delivered.length === 0);
    }
    expect(rounds).toBe(9);
    expect((await fixture.store.listDead(10)).map((m) => m.id)).toEqual([]);
    expect(delivered).toEqual([id]);
  });
});
