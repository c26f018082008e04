import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import type { NewOutboxMessage } from '../../src/core/message.js';
import type { OutboxOperator, PartitionLease } from '../../src/core/ports.js';
import type { PendingMessageOperator, PendingQuery } from '../../src/core/ports/pending-messages.js';
import { validateMessage } from '../../src/core/validate-message.js';
import type { OperatorEnvironment, OperatorHarness } from './operator-conformance.js';

const P = 64;
const LISTED_FIELDS = ['ageSeconds', 'attempts', 'createdAt', 'destination', 'dueAt', 'id', 'key', 'lastError', 'seq', 'topic', 'type'];

const msg = (
  topic: string,
  extra: { key?: string; delayMs?: number; payload?: unknown; contentType?: string; headers?: Record<string, string>; destination?: string } = {},
): NewOutboxMessage => validateMessage({ topic, type: 'test.event', payload: { n: 1 }, ...extra }, { maxPayloadBytes: 4096 });
const ids = (messages: readonly { readonly id: string }[]) => messages.map((m) => m.id);

/** The pending-message tools of a store, which the operator port declares optional: every store of outboxer has them. */
function tools(operator: OutboxOperator): Required<PendingMessageOperator> {
  const { listPending, inspectPending, deletePending } = operator;
  if (listPending === undefined || inspectPending === undefined || deletePending === undefined) throw new Error('this store lacks the pending-message tools');
  return { listPending: listPending.bind(operator), inspectPending: inspectPending.bind(operator), deletePending: deletePending.bind(operator) };
}

async function refusal(action: Promise<unknown>): Promise<ConfigurationError> {
  const error: unknown = await action.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof ConfigurationError) return error;
  throw new Error(`expected a ConfigurationError, got ${String(error)}`);
}

/** A relay holding every partition, as the reader port sees it. */
async function relayOf(e: OperatorEnvironment) {
  const { relayId } = await e.leases.join({ name: 'pending-conformance', leaseMs: 60_000 });
  const leases = await e.leases.acquire(relayId, P);
  const epoch = (partition: number) => (leases.find((l: PartitionLease) => l.partition === partition) as PartitionLease).epoch;
  const read = async () =>
    (
      await e.reader.read(
        relayId,
        P,
        leases.map((l) => ({ partition: l.partition, epoch: l.epoch, after: null, recheck: null, limit: 100 })),
      )
    ).messages;
  return { relayId, epoch, read };
}

/**
 * The pending-message tools (`listPending`, `inspectPending`, `deletePending`), run against each real database
 * through the ports only, with the harness's controls for states the ports cannot reach quickly (ages, dead rows).
 */
export function describePendingConformance(harness: OperatorHarness): void {
  describe(`${harness.name} pending-message conformance`, () => {
    let env: OperatorEnvironment | undefined;
    const setup = async () => {
      env = await harness.setup();
      return { e: env, pending: tools(env.operator) };
    };
    afterEach(async () => {
      await env?.cleanup();
      env = undefined;
    });

    it('lists only pending messages, due and scheduled, in store order, with where each stands and never a body', async () => {
      const { e, pending } = await setup();
      await e.enqueue([msg('gone'), msg('gone')]);
      await e.controls.parkAllAsDead('parked for the test');
      await e.enqueue([msg('done')]);
      await e.controls.markAllPublished();
      const [due, delayed, unkeyed] = [msg('orders', { key: 'k' }), msg('orders', { key: 'k', delayMs: 60_000 }), msg('audit')];
      await e.enqueue([due, delayed, unkeyed]);
      const listed = await pending.listPending({ limit: 10 });
      expect(ids(listed)).toEqual(ids([due, delayed, unkeyed]));
      const seqs = listed.map((m) => BigInt(m.seq));
      expect(seqs).toEqual([...seqs].sort((a, b) => (a < b ? -1 : 1)));
      for (const m of listed) {
        expect(Object.keys(m).sort()).toEqual(LISTED_FIELDS);
        expect(m).toMatchObject({ type: 'test.event', attempts: 0, lastError: null });
        expect(m.ageSeconds).toBeGreaterThanOrEqual(0);
        expect(m.ageSeconds).toBeLessThan(60);
        expect(Math.abs(m.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
      }
      expect(listed.map(({ topic, key, dueAt }) => ({ topic, key, scheduled: dueAt !== null }))).toEqual([
        { topic: 'orders', key: 'k', scheduled: false },
        { topic: 'orders', key: 'k', scheduled: true },
        { topic: 'audit', key: null, scheduled: false },
      ]);
      const delay = (listed[1]?.dueAt?.getTime() ?? 0) - (listed[1]?.createdAt.getTime() ?? 0);
      expect(delay).toBeGreaterThan(55_000);
      expect(delay).toBeLessThanOrEqual(61_000);
      expect(ids(await pending.listPending({ limit: 2 }))).toEqual(ids([due, delayed]));
    });

    it('orders by seq as a number, past 9 and 99 (never as text), with and without a key filter', async () => {
      const { e, pending } = await setup();
      const many = Array.from({ length: 120 }, () => msg('t', { key: 'k' }));
      await e.enqueue(many);
      expect(ids(await pending.listPending({ limit: 200 }))).toEqual(ids(many));
      expect(ids(await pending.listPending({ limit: 200, key: 'k' }))).toEqual(ids(many));
    });

    it('filters by topic, key and age by the database clock, alone or together', async () => {
      const { e, pending } = await setup();
      const old = [msg('a', { key: 'k1' }), msg('b', { key: 'k1' }), msg('a', { key: 'k2' }), msg('a')];
      await e.enqueue(old);
      await e.controls.ageCreated(600);
      const fresh = msg('a', { key: 'k1' });
      await e.enqueue([fresh]);
      const [a1, b1, a2, a] = old as [NewOutboxMessage, NewOutboxMessage, NewOutboxMessage, NewOutboxMessage];
      const list = async (filters: { topic?: string; key?: string; olderThanSeconds?: number }) => ids(await pending.listPending({ limit: 100, ...filters }));
      expect(await list({ topic: 'a' })).toEqual(ids([a1, a2, a, fresh]));
      expect(await list({ key: 'k1' })).toEqual(ids([a1, b1, fresh]));
      expect(await list({ topic: 'a', key: 'k1' })).toEqual(ids([a1, fresh]));
      expect(await list({ olderThanSeconds: 300 })).toEqual(ids(old));
      expect(await list({ olderThanSeconds: 0 })).toEqual(ids([...old, fresh]));
      expect(await list({ topic: 'a', key: 'k1', olderThanSeconds: 300 })).toEqual(ids([a1]));
      expect(await list({ topic: 'nothing' })).toEqual([]);
      for (const m of await pending.listPending({ limit: 10, olderThanSeconds: 300 })) expect(m.ageSeconds).toBeGreaterThanOrEqual(600);
    });

    it("shows each message's destination and filters by it (null: the rows without one)", async () => {
      const { e, pending } = await setup();
      const rows = [msg('a', { key: 'k' }), msg('a', { key: 'k', destination: 'partner' }), msg('b', { destination: 'ledger' })];
      await e.enqueue(rows);
      expect((await pending.listPending({ limit: 10 })).map((m) => m.destination)).toEqual([null, 'partner', 'ledger']);
      expect(ids(await pending.listPending({ limit: 10, destination: 'partner' }))).toEqual(ids([rows[1] as NewOutboxMessage]));
      expect(ids(await pending.listPending({ limit: 10, destination: null, key: 'k' }))).toEqual(ids([rows[0] as NewOutboxMessage]));
      expect((await pending.inspectPending(rows[2]?.id ?? ''))?.destination).toBe('ledger');
    });

    it('refuses a bad limit, topic, key or age with a ConfigurationError naming the input', async () => {
      const { pending } = await setup();
      const cases: [PendingQuery, string, string][] = [
        [{ limit: 0 }, 'OUTBOXER_INVALID_OPTION', 'limit'],
        [{ limit: 100_001 }, 'OUTBOXER_INVALID_OPTION', 'limit'],
        [{ limit: 1.5 }, 'OUTBOXER_INVALID_OPTION', 'limit'],
        [{ limit: 10, topic: '' }, 'OUTBOXER_INVALID_TOPIC', 'topic'],
        [{ limit: 10, topic: 't'.repeat(256) }, 'OUTBOXER_INVALID_TOPIC', 'topic'],
        [{ limit: 10, key: 'a\u001bb' }, 'OUTBOXER_INVALID_KEY', 'key'],
        [{ limit: 10, olderThanSeconds: -1 }, 'OUTBOXER_INVALID_OPTION', 'olderThanSeconds'],
      ];
      for (const [query, code, option] of cases) {
        const error = await refusal(pending.listPending(query));
        expect([error.code, error.options]).toEqual([code, [option]]);
      }
    });

    it("shows a failed message's attempts, error and backoff as the relay wrote them, and the message of its key behind it", async () => {
      const { e, pending } = await setup();
      const relay = await relayOf(e);
      const [first, second] = [msg('orders', { key: 'k' }), msg('orders', { key: 'k' })];
      await e.enqueue([first, second]);
      const [read] = await relay.read();
      const p = read?.partition ?? -1;
      await e.reader.complete(relay.relayId, [
        {
          partition: p,
          epoch: relay.epoch(p),
          published: [],
          failed: [{ id: first.id, error: 'OUTBOXER_PUBLISH_TIMEOUT: no confirmation', retryInMs: 60_000 }],
          held: [],
        },
      ]);
      const [failed, behind] = await pending.listPending({ limit: 10 });
      expect(failed).toMatchObject({ id: first.id, attempts: 1, lastError: 'OUTBOXER_PUBLISH_TIMEOUT: no confirmation' });
      const dueIn = (failed?.dueAt?.getTime() ?? 0) - (failed?.createdAt.getTime() ?? 0) - (failed?.ageSeconds ?? 0) * 1000;
      expect(dueIn).toBeGreaterThan(50_000);
      expect(dueIn).toBeLessThanOrEqual(61_000);
      expect(behind).toMatchObject({ id: second.id, attempts: 0, lastError: null, dueAt: null });
    });

    it('inspects one pending message: header names and body size always, header values and the exact body only when asked', async () => {
      const { e, pending } = await setup();
      const text = '{"b":1,  "a":"\u00e9", "n":1e3}';
      await e.controls.insertPlain([{ topic: 'plain', type: 'plain.event', payload: text, key: 'k', headers: { tenant: 'acme', 'correlation-id': 'c-1' } }]);
      const bytes = Uint8Array.from([0x0a, 0x03, 0x66, 0x6f, 0x6f, 0x00, 0xff]);
      const binary = msg('bin', { payload: bytes, contentType: 'application/x-protobuf' });
      await e.enqueue([binary]);
      const [plain] = await pending.listPending({ limit: 1, topic: 'plain' });
      const id = plain?.id ?? '';

      const hidden = await pending.inspectPending(id);
      expect(hidden).toMatchObject({
        id,
        topic: 'plain',
        type: 'plain.event',
        key: 'k',
        attempts: 0,
        contentType: 'application/json',
        headerNames: ['correlation-id', 'tenant'],
        bodyBytes: Buffer.byteLength(text),
      });
      expect(hidden).not.toHaveProperty('content');
      expect(JSON.stringify(hidden)).not.toContain('acme');

      const shown = await pending.inspectPending(id.toUpperCase(), { body: true });
      expect(shown?.content).toEqual({ headers: { tenant: 'acme', 'correlation-id': 'c-1' }, body: text });
      const raw = await pending.inspectPending(binary.id, { body: true });
      expect(raw).toMatchObject({ contentType: 'application/x-protobuf', headerNames: [], bodyBytes: bytes.length });
      expect(Buffer.from(raw?.content?.body as Uint8Array).equals(Buffer.from(bytes))).toBe(true);
    });

    it('inspects nothing that is not pending, and refuses an id that is no UUID', async () => {
      const { e, pending } = await setup();
      const [dead, published] = [msg('t'), msg('t')];
      await e.enqueue([dead]);
      await e.controls.parkAllAsDead('x');
      await e.enqueue([published]);
      await e.controls.markAllPublished();
      for (const id of [dead.id, published.id, '00000000-0000-7000-8000-000000000000'])
        expect(await pending.inspectPending(id, { body: true })).toBeUndefined();
      const error = await refusal(pending.inspectPending('not-a-uuid'));
      expect(error.code).toBe('OUTBOXER_INVALID_ID');
      expect(error.message).toContain('"not-a-uuid"');
    });

    it('deletes only messages still pending, says how many, and changes nothing the second time', async () => {
      const { e, pending } = await setup();
      const dead = msg('t');
      await e.enqueue([dead]);
      await e.controls.parkAllAsDead('x');
      const [a, b, kept] = [msg('t', { key: 'k' }), msg('t'), msg('t', { key: 'k' })];
      await e.enqueue([a, b, kept]);
      const unknown = '00000000-0000-7000-8000-000000000000';
      expect(await pending.deletePending([a.id, b.id.toUpperCase(), dead.id, unknown, a.id])).toBe(2);
      expect(await pending.deletePending([a.id, b.id])).toBe(0);
      expect(await pending.deletePending([])).toBe(0);
      expect(ids(await pending.listPending({ limit: 10 }))).toEqual([kept.id]);
      expect(await e.operator.stats()).toMatchObject({ pending: 1, dead: 1 });
      const error = await refusal(pending.deletePending([kept.id, 'nope']));
      expect(error.code).toBe('OUTBOXER_INVALID_ID');
      expect(await e.controls.rowCount()).toBe(2);
    });

    it('deletes any number of ids, in bounded batches', async () => {
      const { e, pending } = await setup();
      const many = Array.from({ length: 1205 }, (_, n) => msg('bulk', { key: `k${n % 7}` }));
      await e.enqueue(many);
      expect(await pending.deletePending(ids(many))).toBe(1205);
      expect(await e.controls.rowCount()).toBe(0);
    });

    it('a relay that read messages before they were deleted completes them without error, writing nothing for them', async () => {
      const { e, pending } = await setup();
      const relay = await relayOf(e);
      const [published, failed, held, other] = [msg('t', { key: 'k1' }), msg('t', { key: 'k2' }), msg('t'), msg('t')];
      await e.enqueue([published, failed, held, other]);
      const read = await relay.read();
      const partitionOf = (id: string) => read.find((m) => m.id === id)?.partition ?? -1;
      expect(await pending.deletePending([published.id, failed.id, held.id])).toBe(3);
      const completions = [
        { id: published.id, published: [published.id], failed: [], held: [] },
        { id: failed.id, published: [], failed: [{ id: failed.id, error: 'boom', retryInMs: 1000 }], held: [] },
        { id: held.id, published: [], failed: [], held: [{ id: held.id, delayMs: 1000, reason: 'held' }] },
      ];
      for (const { id, ...outcome } of completions) {
        const p = partitionOf(id);
        expect(await e.reader.complete(relay.relayId, [{ partition: p, epoch: relay.epoch(p), ...outcome }])).toEqual([
          { partition: p, epoch: relay.epoch(p), applied: true, changed: 0, skipped: [] },
        ]);
      }
      expect(ids(await pending.listPending({ limit: 10 }))).toEqual([other.id]);
      expect(await e.controls.rowCount()).toBe(1);
    });

    it('deleting a scheduled message ends its hold: the later messages of its key are read without waiting for it', async () => {
      const { e, pending } = await setup();
      const relay = await relayOf(e);
      const [first, second, third] = [msg('t', { key: 'k' }), msg('t', { key: 'k' }), msg('t', { key: 'k' })];
      await e.enqueue([first, second, third]);
      const p = (await relay.read())[0]?.partition ?? -1;
      await e.reader.complete(relay.relayId, [
        { partition: p, epoch: relay.epoch(p), published: [], failed: [{ id: first.id, error: 'boom', retryInMs: 60_000 }], held: [] },
      ]);
      const waiting = await relay.read();
      expect(waiting.map((m) => [m.id, m.waitsFor !== null])).toEqual([
        [second.id, true],
        [third.id, true],
      ]);
      expect(await pending.deletePending([first.id])).toBe(1);
      const flowing = await relay.read();
      expect(flowing.map((m) => [m.id, m.waitsFor])).toEqual([
        [second.id, null],
        [third.id, null],
      ]);
    });
  });
}
