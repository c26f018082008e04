import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import type { NewOutboxMessage } from '../../src/core/message.js';
import type { OutboxOperator, PartitionReader, RelayLeases } from '../../src/core/ports.js';
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

const msg = (topic: string, extra: { key?: string; delayMs?: number } = {}) =>
  validateMessage({ topic, type: 'test.event', payload: { n: 1 }, ...extra }, { maxPayloadBytes: 1024 });
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

async function refusal(action: Promise<unknown>): Promise<ConfigurationError> {
  const error: unknown = await action.then(() => undefined, (e: unknown) => e);
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
          { topic: 'a', pending: 3 }, { topic: 'c', pending: 2 }, { topic: 'b', pending: 1 }, { topic: 'd', pending: 1 },
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
          { topic: 'orders', reason: 'consumer migration' }, { topic: 'audit', reason: '' },
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
        for (const reason of ['x'.repeat(501), 'line\nbreak']) expect((await refusal(e.operator.pauseTopic('orders', reason))).code).toBe('OUTBOXER_INVALID_OPTION');
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
  });
}
