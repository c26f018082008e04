import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import type { NewOutboxMessage } from '../../src/core/message.js';
import type { OutboxOperator, PartitionLease, PartitionReader, RelayLeases } from '../../src/core/ports.js';
import { operatorReason, relayHoldReason } from '../../src/core/topic-pauses.js';
import { validateMessage } from '../../src/core/validate-message.js';
import type { LeaseControls } from './lease-harness.js';
import type { TestControls } from './store-harness.js';

/** One database under the operator conformance suite, freshly migrated (a new table: engine v2, 64 partitions). */
export interface OperatorEnvironment {
  readonly operator: OutboxOperator;
  /** The relays' roles of the same store: relays join and take partitions through these. */
  readonly leases: RelayLeases;
  readonly reader: PartitionReader;
  /** Inserts messages in a transaction of their own that commits. */
  enqueue(messages: readonly NewOutboxMessage[]): Promise<void>;
  readonly controls: TestControls;
  readonly leaseControls: LeaseControls;
  cleanup(): Promise<void>;
}

export interface OperatorHarness {
  readonly name: string;
  setup(): Promise<OperatorEnvironment>;
}

const msg = (topic: string, extra: { key?: string; delayMs?: number; destination?: string } = {}) =>
  validateMessage({ topic, type: 'test.event', payload: { n: 1 }, ...extra }, { maxPayloadBytes: 1024 });
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

async function refusal(action: Promise<unknown>): Promise<ConfigurationError> {
  const error: unknown = await action.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof ConfigurationError) return error;
  throw new Error(`expected a ConfigurationError, got ${String(error)}`);
}

/**
 * The operator methods of issue 11 (`topicLag`, `relayGroup`, operator pauses), run against each real database
 * through the port only, with the harness's controls for what the port cannot reach (ages, expired leases).
 */
export function describeOperatorConformance(harness: OperatorHarness): void {
  describe(`${harness.name} operator conformance`, () => {
    let env: OperatorEnvironment | undefined;
    const setup = async () => (env = await harness.setup());
    afterEach(async () => {
      await env?.cleanup();
      env = undefined;
    });

    describe('topicLag', () => {
      it('counts pending messages per topic, scheduled ones included and dead ones not, largest backlog first, then by topic', async () => {
        const e = await setup();
        expect(await e.operator.topicLag(10)).toEqual([]);
        await e.enqueue([msg('gone'), msg('gone')]);
        await e.controls.parkAllAsDead('parked for the test');
        await e.enqueue([msg('b'), msg('a', { key: 'k' }), msg('c'), msg('a', { key: 'k' }), msg('c', { delayMs: 60_000 }), msg('a'), msg('d')]);
        const lag = await e.operator.topicLag(10);
        expect(lag.map(({ topic, pending }) => ({ topic, pending }))).toEqual([
          { topic: 'a', pending: 3 },
          { topic: 'c', pending: 2 },
          { topic: 'b', pending: 1 },
          { topic: 'd', pending: 1 },
        ]);
        expect((await e.operator.topicLag(2)).map((l) => l.topic)).toEqual(['a', 'c']);
      });

      it("gives each topic's oldest pending age by the database clock", async () => {
        const e = await setup();
        await e.enqueue([msg('a'), msg('b')]);
        const fresh = await e.operator.topicLag(10);
        for (const l of fresh) {
          expect(l.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(0);
          expect(l.oldestPendingAgeSeconds).toBeLessThan(60);
        }
        await e.controls.ageCreated(600);
        await e.enqueue([msg('a')]);
        const aged = await e.operator.topicLag(10);
        expect(aged.map((l) => l.topic)).toEqual(['a', 'b']);
        for (const l of aged) expect(l.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(600);
      });

      it('says which topics relays hold for a missing destination (why, since when, how many) from the held rows, and lists them first', async () => {
        const e = await setup();
        await e.enqueue([
          msg('busy'),
          msg('busy'),
          msg('busy'),
          msg('busy'),
          msg('late', { key: 'k' }),
          msg('late', { key: 'k' }),
          msg('late'),
          msg('retried'),
          msg('halted'),
        ]);
        expect((await e.operator.topicLag(10)).every((lag) => lag.relayPause === null)).toBe(true);
        // what a relay's completion writes: a hold for a missing destination (two episodes: two relays, or a restart),
        // a counted retry, an operator's hold; only the first kind is a relay pause
        const { relayId } = await e.leases.join({ name: 'operator-conformance', leaseMs: 60_000 });
        const leases = await e.leases.acquire(relayId, 64);
        const read = await e.reader.read(
          relayId,
          64,
          leases.map((l) => ({ partition: l.partition, epoch: l.epoch, after: null, recheck: null, limit: 100 })),
        );
        const earlier = new Date('2026-11-25T16:30:00.000Z');
        const later = new Date('2026-11-25T16:45:00.000Z');
        const late = read.messages.filter((m) => m.topic === 'late');
        const holdOf = (m: { readonly id: string; readonly topic: string }) => {
          if (m.topic === 'late')
            return {
              id: m.id,
              delayMs: 60_000,
              reason: relayHoldReason(
                m.id === late[0]?.id ? earlier : later,
                m.id === late[0]?.id ? 'OUTBOXER_UNROUTABLE: first' : 'OUTBOXER_NO_STREAM: latest',
              ),
            };
          return m.topic === 'halted' ? { id: m.id, delayMs: 60_000, reason: operatorReason('maintenance') } : undefined;
        };
        const completions = leases
          .map((lease: PartitionLease) => {
            const mine = read.messages.filter((m) => m.partition === lease.partition);
            return {
              partition: lease.partition,
              epoch: lease.epoch,
              published: [],
              failed: mine
                .filter((m) => m.topic === 'retried')
                .map((m) => ({ id: m.id, error: 'OUTBOXER_PUBLISH_TIMEOUT: destination missing since 2026-11-25T16:30:00.000Z', retryInMs: 60_000 })),
              held: mine.flatMap((m) => holdOf(m) ?? []),
            };
          })
          .filter((c) => c.failed.length + c.held.length > 0);
        await e.reader.complete(relayId, completions);

        const lag = await e.operator.topicLag(10);
        expect(lag.map(({ topic, pending, relayPause }) => ({ topic, pending, relayPause }))).toEqual([
          { topic: 'late', pending: 3, relayPause: { reason: 'OUTBOXER_NO_STREAM: latest', since: earlier, held: 3 } },
          { topic: 'busy', pending: 4, relayPause: null },
          { topic: 'halted', pending: 1, relayPause: null },
          { topic: 'retried', pending: 1, relayPause: null },
        ]);
        // first even when the limit cuts the list: a held topic is never left out for a larger backlog
        expect((await e.operator.topicLag(1)).map((l) => l.topic)).toEqual(['late']);
      });

      it('counts a fanned-out topic once per destination', async () => {
        const e = await setup();
        await e.enqueue([msg('orders'), msg('orders', { destination: 'partner' }), msg('orders', { destination: 'partner' }), msg('audit')]);
        const lag = await e.operator.topicLag(10);
        expect(lag.map(({ topic, destination, pending }) => ({ topic, destination, pending }))).toEqual([
          { topic: 'orders', destination: 'partner', pending: 2 },
          { topic: 'audit', destination: null, pending: 1 },
          { topic: 'orders', destination: null, pending: 1 },
        ]);
      });

      it.each([0, -1, 1.5, 1001, Number.NaN])('refuses a limit of %s', async (limit) => {
        const e = await setup();
        const error = await refusal(e.operator.topicLag(limit));
        expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
        expect(error.options).toEqual(['limit']);
      });
    });

    describe('relayGroup', () => {
      it('lists no relay and every partition as unowned on a new table', async () => {
        const e = await setup();
        expect(await e.operator.relayGroup()).toEqual({ partitionCount: 64, relays: [], unowned: range(0, 64) });
      });

      it('lists the live relays by name with the partitions each holds (draining included), their lease left, and the partitions nobody holds', async () => {
        const e = await setup();
        const beta = (await e.leases.join({ name: 'beta', leaseMs: 60_000 })).relayId;
        const alpha = (await e.leases.join({ name: 'alpha', leaseMs: 30_000 })).relayId;
        const held = await e.leases.acquire(beta, 3);
        await e.leases.acquire(alpha, 2);
        await e.leases.drain(beta, held.slice(0, 1));
        const group = await e.operator.relayGroup();
        expect(group.partitionCount).toBe(64);
        expect(group.relays.map(({ id, name, leaving, partitions }) => ({ id, name, leaving, partitions }))).toEqual([
          { id: alpha, name: 'alpha', leaving: false, partitions: [3, 4] },
          { id: beta, name: 'beta', leaving: false, partitions: [0, 1, 2] },
        ]);
        const [a, b] = group.relays;
        expect(a?.expiresInMs).toBeGreaterThan(20_000);
        expect(a?.expiresInMs).toBeLessThanOrEqual(30_000);
        expect(b?.expiresInMs).toBeGreaterThan(50_000);
        expect(b?.expiresInMs).toBeLessThanOrEqual(60_000);
        expect(group.unowned).toEqual(range(5, 64));
      });

      it("shows each relay's broker trouble with its reason and since when, kept across beats while it lasts, gone once it ends", async () => {
        const e = await setup();
        const before = Date.now();
        const sick = (await e.leases.join({ name: 'sick', leaseMs: 60_000, trouble: 'broker unreachable: connection refused' })).relayId;
        await e.leases.join({ name: 'well', leaseMs: 60_000 });
        const first = await e.operator.relayGroup();
        expect(first.relays.find((r) => r.name === 'well')?.trouble).toBeNull();
        const trouble = first.relays.find((r) => r.id === sick)?.trouble;
        expect(trouble?.reason).toBe('broker unreachable: connection refused');
        // the database's clock and this process's may differ a little
        expect(Math.abs((trouble?.since.getTime() ?? 0) - before)).toBeLessThan(5_000);
        await e.leases.heartbeat(sick, { trouble: 'broker unreachable for 10 s' });
        const kept = (await e.operator.relayGroup()).relays.find((r) => r.id === sick)?.trouble;
        expect(kept?.reason).toBe('broker unreachable for 10 s');
        expect(kept?.since.getTime()).toBe(trouble?.since.getTime());
        await e.leases.heartbeat(sick, {});
        expect((await e.operator.relayGroup()).relays.find((r) => r.id === sick)?.trouble).toBeNull();
      });

      it('drops a relay whose lease ran out by the database clock, and counts its partitions as unowned before any reap', async () => {
        const e = await setup();
        const gone = (await e.leases.join({ name: 'gone', leaseMs: 60_000 })).relayId;
        const stays = (await e.leases.join({ name: 'stays', leaseMs: 60_000 })).relayId;
        await e.leases.acquire(gone, 2);
        await e.leases.acquire(stays, 1);
        await e.leases.heartbeat(gone, { leaving: true });
        expect((await e.operator.relayGroup()).relays.find((r) => r.id === gone)?.leaving).toBe(true);
        await e.leaseControls.expireRelay(gone);
        const group = await e.operator.relayGroup();
        expect(group.relays.map((r) => ({ name: r.name, partitions: r.partitions }))).toEqual([{ name: 'stays', partitions: [2] }]);
        expect(group.unowned).toEqual([0, 1, ...range(3, 64)]);
        await e.leases.leave(stays);
        expect(await e.operator.relayGroup()).toEqual({ partitionCount: 64, relays: [], unowned: range(0, 64) });
      });
    });

    describe('operator pauses', () => {
      it('pauses and resumes a topic idempotently, keeping the first reason and time, and lists pauses oldest first', async () => {
        const e = await setup();
        expect(await e.operator.pausedTopics()).toEqual([]);
        expect(await e.operator.pauseTopic('orders', 'consumer migration')).toBe(true);
        expect(await e.operator.pauseTopic('orders', 'another reason')).toBe(false);
        expect(await e.operator.pauseTopic('audit', '')).toBe(true);
        const listed = await e.operator.pausedTopics();
        expect(listed.map(({ topic, reason }) => ({ topic, reason }))).toEqual([
          { topic: 'orders', reason: 'consumer migration' },
          { topic: 'audit', reason: '' },
        ]);
        for (const pause of listed) {
          expect(pause.pausedAt).toBeInstanceOf(Date);
          expect(Math.abs(pause.pausedAt.getTime() - Date.now())).toBeLessThan(60_000);
        }
        expect(await e.operator.resumeTopic('orders')).toBe(true);
        expect(await e.operator.resumeTopic('orders')).toBe(false);
        expect(await e.operator.resumeTopic('never-paused')).toBe(false);
        expect((await e.operator.pausedTopics()).map((p) => p.topic)).toEqual(['audit']);
      });

      it("is what the relays' reader reads, and touches no message", async () => {
        const e = await setup();
        await e.enqueue([msg('orders', { key: 'k' }), msg('orders')]);
        const before = await e.operator.topicLag(10);
        await e.operator.pauseTopic('orders', 'held for the test');
        expect((await e.reader.pausedTopics?.())?.map(({ topic, reason }) => ({ topic, reason }))).toEqual([{ topic: 'orders', reason: 'held for the test' }]);
        expect(await e.operator.topicLag(10)).toEqual([{ ...before[0], oldestPendingAgeSeconds: expect.any(Number) }]);
        await e.operator.resumeTopic('orders');
        expect(await e.reader.pausedTopics?.()).toEqual([]);
        expect((await e.operator.topicLag(10))[0]?.pending).toBe(2);
      });

      it('takes any topic a row can have, up to 255 bytes, and refuses empty, longer or control-character topics and long reasons', async () => {
        const e = await setup();
        expect(await e.operator.pauseTopic('legacy topic/é', 'x'.repeat(500))).toBe(true);
        expect(await e.operator.pauseTopic('t'.repeat(255), '')).toBe(true);
        for (const topic of ['', 't'.repeat(256), 'a\nb', 'a\u202eb']) {
          expect((await refusal(e.operator.pauseTopic(topic, ''))).code).toBe('OUTBOXER_INVALID_TOPIC');
          expect((await refusal(e.operator.resumeTopic(topic))).code).toBe('OUTBOXER_INVALID_TOPIC');
        }
        for (const reason of ['x'.repeat(501), 'line\nbreak'])
          expect((await refusal(e.operator.pauseTopic('orders', reason))).code).toBe('OUTBOXER_INVALID_OPTION');
        expect((await e.operator.pausedTopics()).map((p) => p.topic).sort()).toEqual(['legacy topic/é', 't'.repeat(255)]);
      });

      it('keeps at most 1000 topics paused, refusing the next with what to do', async () => {
        const e = await setup();
        for (const n of range(0, 1000)) await e.operator.pauseTopic(`topic-${n}`, '');
        expect(await e.operator.pauseTopic('topic-7', 'again')).toBe(false);
        const error = await refusal(e.operator.pauseTopic('one-too-many', ''));
        expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
        expect(error.message).toContain('resume some first');
        expect(await e.operator.pausedTopics()).toHaveLength(1000);
      });
    });

    describe('operator pauses of whole destinations', () => {
      it('pauses and resumes a destination idempotently, keeping the first reason and time, and lists pauses oldest first', async () => {
        const e = await setup();
        expect(await e.operator.pausedDestinations()).toEqual([]);
        expect(await e.operator.pauseDestination('partner', 'their maintenance, INC-12')).toBe(true);
        const first = (await e.operator.pausedDestinations())[0];
        expect(await e.operator.pauseDestination('partner', 'another reason')).toBe(false);
        expect(await e.operator.pauseDestination('default', '')).toBe(true);
        const listed = await e.operator.pausedDestinations();
        expect(listed.map(({ destination, reason }) => ({ destination, reason }))).toEqual([
          { destination: 'partner', reason: 'their maintenance, INC-12' },
          { destination: 'default', reason: '' },
        ]);
        expect(listed[0]?.pausedAt).toEqual(first?.pausedAt);
        for (const pause of listed) {
          expect(pause.pausedAt).toBeInstanceOf(Date);
          expect(Math.abs(pause.pausedAt.getTime() - Date.now())).toBeLessThan(60_000);
        }
        expect(await e.operator.resumeDestination('partner')).toBe(true);
        expect(await e.operator.resumeDestination('partner')).toBe(false);
        expect(await e.operator.resumeDestination('never-paused')).toBe(false);
        expect((await e.operator.pausedDestinations()).map((p) => p.destination)).toEqual(['default']);
      });

      it("is what the relays' reader reads, apart from the paused topics, and touches no message", async () => {
        const e = await setup();
        await e.enqueue([msg('orders', { key: 'k', destination: 'partner' }), msg('orders', { key: 'k' })]);
        const before = await e.operator.topicLag(10);
        await e.operator.pauseDestination('partner', 'held for the test');
        await e.operator.pauseTopic('audit', 'a topic');
        expect((await e.reader.destinationPauses?.())?.map(({ destination, reason }) => ({ destination, reason }))).toEqual([
          { destination: 'partner', reason: 'held for the test' },
        ]);
        expect((await e.reader.pausedTopics?.())?.map((p) => p.topic)).toEqual(['audit']);
        expect((await e.operator.pausedTopics()).map((p) => p.topic)).toEqual(['audit']);
        expect(await e.operator.topicLag(10)).toEqual(before.map((lag) => ({ ...lag, oldestPendingAgeSeconds: expect.any(Number) })));
        await e.operator.resumeDestination('partner');
        expect(await e.reader.destinationPauses?.()).toEqual([]);
        expect((await e.operator.pausedTopics()).map((p) => p.topic)).toEqual(['audit']);
        expect((await e.operator.topicLag(10)).reduce((n, lag) => n + lag.pending, 0)).toBe(2);
      });

      it('takes a destination name as rows name it (or `default`), up to 64 bytes, and refuses any other name and long reasons', async () => {
        const e = await setup();
        expect(await e.operator.pauseDestination('d'.repeat(64), 'x'.repeat(500))).toBe(true);
        expect(await e.operator.pauseDestination('Partner_EU-2', '')).toBe(true);
        for (const destination of ['', 'd'.repeat(65), 'partner.eu', 'partner eu', '-partner', 'a\nb', '*@partner', 'é']) {
          expect((await refusal(e.operator.pauseDestination(destination, ''))).code).toBe('OUTBOXER_INVALID_DESTINATION');
          expect((await refusal(e.operator.resumeDestination(destination))).code).toBe('OUTBOXER_INVALID_DESTINATION');
        }
        for (const reason of ['x'.repeat(501), 'line\nbreak'])
          expect((await refusal(e.operator.pauseDestination('partner', reason))).code).toBe('OUTBOXER_INVALID_OPTION');
        expect((await e.operator.pausedDestinations()).map((p) => p.destination).sort()).toEqual(['Partner_EU-2', 'd'.repeat(64)]);
      });

      it('keeps at most 1000 destinations paused, refusing the next with what to do', async () => {
        const e = await setup();
        for (const n of range(0, 1000)) await e.operator.pauseDestination(`partner-${n}`, '');
        expect(await e.operator.pauseDestination('partner-7', 'again')).toBe(false);
        const error = await refusal(e.operator.pauseDestination('one-too-many', ''));
        expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
        expect(error.message).toContain('resume some first');
        expect(await e.operator.pausedDestinations()).toHaveLength(1000);
      });
    });
  });
}
