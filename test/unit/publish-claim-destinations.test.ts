import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import { completionsFrom } from '../../src/core/partition-relay/publish-plan.js';
import type { PartitionMessage } from '../../src/core/ports.js';
import { TopicPauses } from '../../src/core/topic-pauses.js';
import { FakePublisher, ids, msg, run, tick, transient } from './publish-claim-fixtures.js';

const down = (m: OutboxMessage) => new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `partner down at ${m.id}`);

describe('publishClaim with named destinations', () => {
  it('holds only the destination whose broker is out of reach; the others flow and the relay is not told to back off', async () => {
    const own = new FakePublisher();
    const partner = new FakePublisher((m) => Promise.reject(down(m)));
    const a1 = msg('a'),
      a1p = msg('a', { destination: 'partner' }),
      a2 = msg('a'),
      a2p = msg('a', { destination: 'partner' }),
      b1p = msg('b', { destination: 'partner' });
    const outcome = await run([a1, a1p, a2, a2p, b1p], own, { errorBackoffMs: 300, destinations: { partner: { publisher: partner } } });
    expect(ids(outcome.published)).toEqual([a1.id, a2.id]);
    expect(ids(outcome.held.get('*@partner')?.messages ?? []).sort()).toEqual([a1p.id, a2p.id, b1p.id].sort());
    expect(outcome.held.get('*@partner')?.error).toMatch(/^destination missing since \S+Z: OUTBOXER_BROKER_UNAVAILABLE: partner down/);
    expect(outcome.brokerUnavailable).toBeUndefined();
    expect(outcome.unavailable).toEqual(new Map([['partner', expect.stringContaining('OUTBOXER_BROKER_UNAVAILABLE')]]));
    expect(outcome.failed).toEqual([]);
    // a1p failed and held its key at partner; a2p never went out ahead of it
    expect(ids(partner.started)).not.toContain(a2p.id);
  });

  it('does not publish to a destination held for its outage until the pause runs out, then probes and resumes it', async () => {
    const pauses = new TopicPauses(60_000, 60_000);
    pauses.pause('*@partner', 'OUTBOXER_BROKER_UNAVAILABLE: down', performance.now());
    const partner = new FakePublisher();
    const held = await run([msg('a', { destination: 'partner' })], new FakePublisher(), { destinations: { partner: { publisher: partner } } }, { pauses });
    expect(partner.started).toEqual([]);
    expect(held.held.has('*@partner')).toBe(true);

    const probing = new TopicPauses(1, 1);
    probing.pause('*@partner', 'down', performance.now() - 10);
    const resumed = await run(
      [msg('a', { destination: 'partner' })],
      new FakePublisher(),
      { destinations: { partner: { publisher: partner } } },
      { pauses: probing },
    );
    expect(resumed.published).toHaveLength(1);
    expect(resumed.topicEvents).toEqual([{ kind: 'resumed', topic: '*@partner', pausedMs: expect.any(Number) }]);
  });

  it('holds a row whose destination the relay lacks, by topic and destination, and nothing else', async () => {
    const m = msg('a', { destination: 'ledger', topic: 'bills' }),
      other = msg('a');
    const outcome = await run([m, other], new FakePublisher());
    expect(ids(outcome.published)).toEqual([other.id]);
    expect(outcome.held.get('bills@ledger')?.error).toMatch(/OUTBOXER_UNKNOWN_DESTINATION: no destination ledger on this relay/);
  });

  it('keeps key order per destination: a retried failure at one destination does not stop the same key at another', async () => {
    const own = new FakePublisher((m) => (m.key === 'a' ? Promise.reject(transient(m)) : tick()));
    const partner = new FakePublisher();
    const a1 = msg('a'),
      a2 = msg('a'),
      a1p = msg('a', { destination: 'partner' }),
      a2p = msg('a', { destination: 'partner' });
    const outcome = await run([a1, a1p, a2, a2p], own, { destinations: { partner: { publisher: partner } } });
    expect(ids(outcome.published)).toEqual([a1p.id, a2p.id]);
    expect(ids(outcome.failed.map((f) => f.message))).toEqual([a1.id]);
    expect(ids(outcome.released)).toEqual([a2.id]);
    expect(partner.keyOverlap).toBe(false);

    const batch = [a1, a1p, a2, a2p].map((m) => ({ ...m, partition: 0, source: 'fresh' as const, waitsFor: null })) as PartitionMessage[];
    const [result] = completionsFrom(batch, outcome, [], () => '1');
    // a2 waits behind a1's retry; the partner rows were published and hold nothing
    expect(result?.completion.held.map((h) => h.id)).toEqual([a2.id]);
    expect(result?.completion.published).toEqual([a1p.id, a2p.id]);
  });

  it('sends each destination the envelope it is given', async () => {
    const partner = new FakePublisher();
    await run([msg('a', { destination: 'partner', headers: { tenant: 't', 'correlation-id': 'c' } })], new FakePublisher(), {
      destinations: { partner: { publisher: partner, envelope: { headers: ['correlation-id'], key: false } } },
    });
    expect(partner.started[0]).toMatchObject({ headers: { 'correlation-id': 'c' }, key: null });
  });
});
