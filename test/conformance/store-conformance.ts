import { afterEach, describe, expect, it } from 'vitest';
import type { NewOutboxMessage } from '../../src/core/message.js';
import { validateMessage } from '../../src/core/validate-message.js';
import type { StoreEnvironment, StoreHarness } from './store-harness.js';

const limits = { maxPayloadBytes: 256 * 1024 };
const owner = 'conformance';

export function msg(topic: string, key: string | null, payload: unknown = { n: 1 }, extra: { delayMs?: number } = {}): NewOutboxMessage {
  return validateMessage({ topic, type: 'test.event', key: key ?? undefined, payload, ...extra }, limits);
}

/**
 * The behaviour every outbox store shares, run against each real database. It talks to the store only
 * through the port and the harness's `TestControls`, so any database can run it.
 */
export function describeStoreConformance<Tx>(harness: StoreHarness<Tx>): void {
  describe(`${harness.name} store conformance`, () => {
    let env: StoreEnvironment<Tx> | undefined;
    const setup = async (options?: { retainPublishedMs?: number }) => {
      env = await harness.setup(options);
      return env;
    };
    afterEach(async () => {
      await env?.cleanup();
      env = undefined;
    });

    it('stores nothing when the caller rolls back, and everything when it commits', async () => {
      const e = await setup();
      await expect(
        e.transaction(async (tx) => {
          await e.store.insert(tx, [msg('a.b', null)]);
          throw new Error('business rule failed');
        }),
      ).rejects.toThrow('business rule failed');
      expect((await e.store.claim({ owner, leaseMs: 30_000, limit: 10 })).messages).toHaveLength(0);
      await e.transaction((tx) => e.store.insert(tx, [msg('a.b', null)]));
      expect((await e.store.claim({ owner, leaseMs: 30_000, limit: 10 })).messages).toHaveLength(1);
    });

    it('claims in store order with the payload JSON, headers and attempt count', async () => {
      const e = await setup();
      const input = [msg('t.one', 'k', { a: 1 }), msg('t.two', 'k', { b: [1, 2] }), msg('t.three', null, 'text')];
      await e.transaction((tx) => e.store.insert(tx, input));
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(claim.messages.map((m) => m.id)).toEqual(input.map((m) => m.id));
      expect(claim.messages.map((m) => JSON.parse(m.body as string))).toEqual([{ a: 1 }, { b: [1, 2] }, 'text']);
      expect(claim.messages.every((m) => m.attempts === 1)).toBe(true);
    });

    it('never gives the same message, or the same key, to two claims', async () => {
      const e = await setup();
      const input = [msg('t', 'k1'), msg('t', 'k1'), msg('t', 'k2'), msg('t', null), msg('t', null)];
      await e.transaction((tx) => e.store.insert(tx, input));
      const first = await e.store.claim({ owner: 'a', leaseMs: 30_000, limit: 2 });
      const second = await e.store.claim({ owner: 'b', leaseMs: 30_000, limit: 10 });
      const firstIds = new Set(first.messages.map((m) => m.id));
      expect(second.messages.some((m) => firstIds.has(m.id))).toBe(false);
      const keysOf = (ms: typeof first.messages) => new Set(ms.map((m) => m.key).filter((k) => k !== null));
      for (const key of keysOf(first.messages)) expect(keysOf(second.messages).has(key)).toBe(false);
      // Everything is claimed but k1's second message, which waits behind its head in the first claim.
      const claimed = new Set([...first.messages, ...second.messages].map((m) => m.id));
      expect([...claimed].sort()).toEqual(input.filter((_, i) => i !== 1).map((m) => m.id).sort());
    });

    it('shares a claim out among keys: heads first, then the rest of the batch evenly along their runs', async () => {
      const e = await setup();
      const input = Array.from({ length: 40 }, (_, i) => msg('t', `k${i % 4}`));
      await e.transaction((tx) => e.store.insert(tx, input));
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 12 });
      const perKey = new Map<string, number>();
      for (const m of claim.messages) perKey.set(m.key ?? '', (perKey.get(m.key ?? '') ?? 0) + 1);
      expect([...perKey.values()]).toEqual([3, 3, 3, 3]);
    });

    it('takes at most maxKeys keys per claim and fills the batch with their runs, leaving the other keys free', async () => {
      const e = await setup();
      const input = Array.from({ length: 40 }, (_, i) => msg('t', `k${i % 4}`));
      await e.transaction((tx) => e.store.insert(tx, input));
      const first = await e.store.claim({ owner: 'a', leaseMs: 30_000, limit: 9, maxKeys: 2 });
      const firstKeys = new Set(first.messages.map((m) => m.key));
      // Two keys, the rest of the batch shared out rounded up (1 + 4 behind each head) and cut to 9.
      expect([...firstKeys].sort()).toEqual(['k0', 'k1']);
      expect(first.messages).toHaveLength(9);
      const second = await e.store.claim({ owner: 'b', leaseMs: 30_000, limit: 9, maxKeys: 2 });
      expect([...new Set(second.messages.map((m) => m.key))].sort()).toEqual(['k2', 'k3']);
      for (const claim of [first, second]) {
        const seqs = claim.messages.map((m) => BigInt(m.seq));
        expect(seqs).toEqual([...seqs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      }
    });

    it('finds a key whose first message sits behind a long backlog of another key', async () => {
      const e = await setup();
      const backlog = Array.from({ length: 300 }, () => msg('t', 'busy'));
      const late = msg('t', 'late');
      await e.transaction((tx) => e.store.insert(tx, [...backlog, late]));
      // The claim checks only the first rows (a few times its batch) for heads, then looks beyond by key.
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 10, maxKeys: 5 });
      expect(claim.messages.map((m) => m.id)).toContain(late.id);
      expect(claim.messages.filter((m) => m.key === 'busy').map((m) => m.id)).toEqual(backlog.slice(0, 5).map((m) => m.id)); // its head and a fair share
    });

    it('starts a claim from fromSeq when given, and reports the lowest row it looked at', async () => {
      const e = await setup();
      const input = Array.from({ length: 6 }, (_, i) => msg('t', `k${i}`));
      await e.transaction((tx) => e.store.insert(tx, input));
      const first = await e.store.claim({ owner, leaseMs: 30_000, limit: 2 });
      expect(first.lowestCandidateSeq).toBe(first.messages[0]?.seq);
      await e.store.release(first.token, first.messages.map((m) => m.id));
      const second = first.messages[1]?.seq ?? '';
      const from = (BigInt(second) + 1n).toString();
      const later = await e.store.claim({ owner, leaseMs: 30_000, limit: 10, fromSeq: from });
      expect(later.messages.map((m) => m.id)).toEqual(input.slice(2).map((m) => m.id));
      expect(later.lowestCandidateSeq).toBe(later.messages[0]?.seq);
      // Without the hint the first two are found again.
      const full = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(full.messages.map((m) => m.id)).toEqual(input.slice(0, 2).map((m) => m.id));
      await expect(e.store.claim({ owner, leaseMs: 30_000, limit: 10, fromSeq: '1; DROP TABLE x' })).rejects.toThrow(/fromSeq/);
    });

    it('never takes a later row of a key from fromSeq while an earlier one is pending below it', async () => {
      const e = await setup();
      const [earlier, later] = [msg('t', 'k'), msg('t', 'k')];
      await e.transaction((tx) => e.store.insert(tx, [earlier, later]));
      const all = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      await e.store.release(all.token, all.messages.map((m) => m.id));
      const laterSeq = all.messages.find((m) => m.id === later.id)?.seq ?? '';
      expect((await e.store.claim({ owner, leaseMs: 30_000, limit: 10, fromSeq: laterSeq })).messages).toEqual([]);
    });

    it('finds an unkeyed message behind a long backlog of one blocked key', async () => {
      const e = await setup();
      const backlog = Array.from({ length: 30 }, () => msg('t', 'busy'));
      const unkeyed = msg('t', null);
      await e.transaction((tx) => e.store.insert(tx, [...backlog, unkeyed]));
      const head = await e.store.claim({ owner: 'a', leaseMs: 30_000, limit: 1 });
      expect(head.messages.map((m) => m.id)).toEqual([backlog[0]?.id]);
      // The window (twice the batch) holds only busy's later rows, none of them a head.
      const claim = await e.store.claim({ owner: 'b', leaseMs: 30_000, limit: 10, maxKeys: 5 });
      expect(claim.messages.map((m) => m.id)).toEqual([unkeyed.id]);
    });

    it('looks past keys whose heads are held when searching beyond the window', async () => {
      const e = await setup();
      const held = ['a1', 'a2', 'a3'].map((key) => msg('t', key));
      const busy = Array.from({ length: 10 }, () => msg('t', 'm'));
      const free = msg('t', 'z');
      await e.transaction((tx) => e.store.insert(tx, [...held, ...busy, free]));
      const first = await e.store.claim({ owner: 'a', leaseMs: 30_000, limit: 4 });
      expect(first.messages.map((m) => m.key)).toEqual(['a1', 'a2', 'a3', 'm']);
      const claim = await e.store.claim({ owner: 'b', leaseMs: 30_000, limit: 2, maxKeys: 1 });
      expect(claim.messages.map((m) => m.id)).toEqual([free.id]);
    });

    it('does not count unkeyed messages against maxKeys', async () => {
      const e = await setup();
      await e.transaction((tx) => e.store.insert(tx, Array.from({ length: 10 }, () => msg('t', null))));
      expect((await e.store.claim({ owner, leaseMs: 30_000, limit: 10, maxKeys: 2 })).messages).toHaveLength(10);
    });

    it('gives a single busy key the whole batch', async () => {
      const e = await setup();
      await e.transaction((tx) => e.store.insert(tx, Array.from({ length: 30 }, () => msg('t', 'hot'))));
      expect((await e.store.claim({ owner, leaseMs: 30_000, limit: 12 })).messages).toHaveLength(12);
    });

    it('takes the open run of a key behind its head in one claim', async () => {
      const e = await setup();
      await e.transaction((tx) => e.store.insert(tx, [msg('t', 'k'), msg('t', 'k'), msg('t', 'k')]));
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(claim.messages).toHaveLength(3);
    });

    it('holds back the rest of a key while its head backs off, and lets other keys flow', async () => {
      const e = await setup();
      const [head, next, other] = [msg('t', 'k'), msg('t', 'k'), msg('t', 'other')];
      await e.transaction((tx) => e.store.insert(tx, [head, next, other]));
      const first = await e.store.claim({ owner, leaseMs: 30_000, limit: 1 });
      expect(first.messages.map((m) => m.id)).toEqual([head.id]);
      expect(await e.store.markFailed(first.token, [{ id: head.id, error: 'broker down', retryInMs: 60_000 }])).toBe(1);
      const second = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(second.messages.map((m) => m.id)).toEqual([other.id]);
      await e.controls.makeAvailableNow();
      const third = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(third.messages.map((m) => m.id)).toEqual([head.id, next.id]);
      expect(third.messages[0]?.attempts).toBe(2);
      expect(third.messages[0]?.lastError).toBe('broker down');
    });

    it('fences a relay whose lease was taken over: its marks change nothing', async () => {
      const e = await setup();
      const m = msg('t', null);
      await e.transaction((tx) => e.store.insert(tx, [m]));
      const stale = await e.store.claim({ owner: 'zombie', leaseMs: 30_000, limit: 10 });
      expect(await e.store.claim({ owner: 'other', leaseMs: 30_000, limit: 10 })).toMatchObject({ messages: [] });
      await e.controls.expireLeases();
      const fresh = await e.store.claim({ owner: 'other', leaseMs: 30_000, limit: 10 });
      expect(fresh.messages.map((x) => x.id)).toEqual([m.id]);
      expect(await e.store.markPublished(stale.token, [m.id])).toBe(0);
      expect(await e.store.markFailed(stale.token, [{ id: m.id, error: 'x', dead: true }])).toBe(0);
      expect(await e.store.release(stale.token, [m.id])).toBe(0);
      expect(await e.store.markPublished(fresh.token, [m.id])).toBe(1);
      expect(await e.store.stats()).toMatchObject({ pending: 0, inFlight: 0, dead: 0 });
    });

    it('marks messages of several leases in one call, fenced per message', async () => {
      const e = await setup();
      const [a, b, c] = [msg('t', 'ka'), msg('t', 'kb'), msg('t', 'kc')];
      await e.transaction((tx) => e.store.insert(tx, [a, b, c]));
      const first = await e.store.claim({ owner: 'one', leaseMs: 30_000, limit: 1 });
      const second = await e.store.claim({ owner: 'two', leaseMs: 30_000, limit: 10 });
      expect(first.messages.map((m) => m.id)).toEqual([a.id]);
      const markEach = e.store.markPublishedEach?.bind(e.store);
      expect(markEach).toBeDefined();
      const marked = await markEach!([
        { token: first.token, id: a.id },
        { token: second.token, id: b.id },
        { token: first.token, id: c.id }, // c is leased under the second claim: fenced
      ]);
      expect([...marked].sort()).toEqual([a.id, b.id].sort());
      expect(await e.store.stats()).toMatchObject({ inFlight: 1 });
    });

    it('lets the lease holder mark late if nobody took the messages over', async () => {
      const e = await setup();
      const m = msg('t', null);
      await e.transaction((tx) => e.store.insert(tx, [m]));
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      await e.controls.expireLeases();
      expect(await e.store.stats()).toMatchObject({ pending: 1, inFlight: 0 }); // the lease ran out
      expect(await e.store.markPublished(claim.token, [m.id])).toBe(1);
    });

    it('gives released messages back with their attempt uncounted', async () => {
      const e = await setup();
      const m = msg('t', 'k');
      await e.transaction((tx) => e.store.insert(tx, [m]));
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(await e.store.release(claim.token, [m.id], 'broker unavailable')).toBe(1);
      const again = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(again.messages[0]?.attempts).toBe(1);
      expect(again.messages[0]?.lastError).toBe('broker unavailable');
      expect(await e.store.release(again.token, [m.id])).toBe(1);
      const kept = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(kept.messages[0]?.lastError).toBe('broker unavailable');
    });

    it('releases a paused topic uncounted for a while: its key waits behind it, other keys flow', async () => {
      const e = await setup();
      const [head, next, other] = [msg('gone', 'k'), msg('t', 'k'), msg('t', 'other')];
      await e.transaction((tx) => e.store.insert(tx, [head, next, other]));
      const first = await e.store.claim({ owner, leaseMs: 30_000, limit: 1 });
      expect(first.messages.map((m) => m.id)).toEqual([head.id]);
      expect(await e.store.release(first.token, [head.id], 'OUTBOXER_UNROUTABLE: no route', 60_000)).toBe(1);
      const second = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(second.messages.map((m) => m.id)).toEqual([other.id]);
      expect(await e.store.stats()).toMatchObject({ scheduled: 1 }); // the head waits out the pause
      await e.controls.makeAvailableNow();
      const third = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(third.messages.map((m) => m.id)).toEqual([head.id, next.id]);
      expect(third.messages[0]?.attempts).toBe(1);
      expect(third.messages[0]?.lastError).toBe('OUTBOXER_UNROUTABLE: no route');
    });

    it('parks a dead message with its reason, lets its key go on, and retries or purges it on request', async () => {
      const e = await setup();
      const [poison, after] = [msg('t', 'k'), msg('t', 'k')];
      await e.transaction((tx) => e.store.insert(tx, [poison, after]));
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 1 });
      await e.store.markFailed(claim.token, [{ id: poison.id, error: 'too large for broker', dead: true }]);
      const next = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(next.messages.map((m) => m.id)).toEqual([after.id]);
      const dead = await e.store.listDead(10);
      expect(dead).toMatchObject([{ id: poison.id, reason: 'too large for broker', attempts: 1, topic: 't' }]);
      expect(await e.store.retryDead([poison.id])).toBe(1);
      expect(await e.store.stats()).toMatchObject({ dead: 0, inFlight: 1, pending: 1 });
      const retried = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(retried.messages.map((m) => m.id)).toEqual([poison.id]);
      await e.store.markFailed(retried.token, [{ id: poison.id, error: 'still too large', dead: true }]);
      expect(await e.store.purgeDead('all')).toBe(1);
      expect(await e.store.listDead(10)).toEqual([]);
    });

    it('retries every dead message in bounded batches', async () => {
      const e = await setup();
      await e.transaction((tx) => e.store.insert(tx, Array.from({ length: 1205 }, () => msg('t', null))));
      await e.controls.parkAllAsDead('x');
      expect(await e.store.retryDead('all')).toBe(1205);
      expect(await e.store.stats()).toMatchObject({ pending: 1205, dead: 0 });
    });

    it('keeps delayed messages until their time, on the database clock', async () => {
      const e = await setup();
      const later = msg('t', null, {}, { delayMs: 3_600_000 });
      await e.transaction((tx) => e.store.insert(tx, [later]));
      expect((await e.store.claim({ owner, leaseMs: 30_000, limit: 10 })).messages).toHaveLength(0);
      expect(await e.store.stats()).toMatchObject({ pending: 0, scheduled: 1 });
      await e.controls.makeAvailableNow();
      expect((await e.store.claim({ owner, leaseMs: 30_000, limit: 10 })).messages).toHaveLength(1);
    });

    it('relays a row written by plain SQL exactly like an enqueue (the plain-SQL table contract)', async () => {
      const e = await setup();
      await e.controls.insertPlain([
        { topic: 'orders.created', type: 'order.created', payload: '{"id": 7}' },
        { topic: 'orders.created', key: 'o-7', type: 'order.created', payload: '{"id": 8}', headers: { tenant: 'acme' } },
      ]);
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(claim.messages).toHaveLength(2);
      const [first, second] = claim.messages;
      expect(first?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(first).toMatchObject({ topic: 'orders.created', type: 'order.created', key: null, headers: {} });
      expect(JSON.parse((first?.body as string | undefined) ?? '')).toEqual({ id: 7 });
      expect(second).toMatchObject({ key: 'o-7', headers: { tenant: 'acme' } });
    });

    it('reports counts by state and the age of the oldest pending message', async () => {
      const e = await setup();
      await e.transaction((tx) => e.store.insert(tx, [msg('t', null), msg('t', null), msg('t', null, {}, { delayMs: 600_000 })]));
      await e.controls.ageCreated(90);
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 1 });
      expect(claim.messages).toHaveLength(1);
      const stats = await e.store.stats();
      expect(stats).toMatchObject({ pending: 1, scheduled: 1, inFlight: 1, published: 0, dead: 0 });
      expect(stats.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(90);
      expect(stats.oldestPendingAgeSeconds).toBeLessThan(200);
    });

    it('deletes published rows at once by default, and keeps them for the retention window when asked', async () => {
      const e = await setup({ retainPublishedMs: 3_600_000 });
      const m = msg('t', null);
      await e.transaction((tx) => e.store.insert(tx, [m]));
      const claim = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      await e.store.markPublished(claim.token, [m.id]);
      expect(await e.store.stats()).toMatchObject({ published: 1, pending: 0 });
      expect(await e.store.purgePublished(100)).toBe(0);
      await e.controls.agePublished(2 * 60 * 60);
      expect(await e.store.purgePublished(100)).toBe(1);
      expect(await e.store.stats()).toMatchObject({ published: 0 });
    });

    it('stores one message per idempotency key and returns the first id for repeats', async () => {
      const e = await setup();
      const first = validateMessage({ topic: 't', type: 'x', payload: 1, idempotencyKey: 'order-7-paid' }, limits);
      const again = validateMessage({ topic: 't', type: 'x', payload: 2, idempotencyKey: 'order-7-paid' }, limits);
      const other = validateMessage({ topic: 't', type: 'x', payload: 3, idempotencyKey: 'order-8-paid' }, limits);
      expect(await e.transaction((tx) => e.store.insert(tx, [first]))).toEqual([first.id]);
      expect(await e.transaction((tx) => e.store.insert(tx, [again, other]))).toEqual([first.id, other.id]);
      const inBatch = validateMessage({ topic: 't', type: 'x', payload: 4, idempotencyKey: 'order-9' }, limits);
      const inBatchAgain = validateMessage({ topic: 't', type: 'x', payload: 5, idempotencyKey: 'order-9' }, limits);
      const plain = msg('t', null);
      expect(await e.transaction((tx) => e.store.insert(tx, [inBatch, plain, inBatchAgain]))).toEqual([inBatch.id, plain.id, inBatch.id]);
      const claimed = await e.store.claim({ owner, leaseMs: 30_000, limit: 10 });
      expect(claimed.messages.map((m) => JSON.parse(m.body as string))).toEqual([1, 3, 4, JSON.parse(plain.body as string)]);
    });

    it('forgets an idempotency key when its transaction rolls back, and after the window', async () => {
      const e = await setup();
      const keyed = (payload: number) => validateMessage({ topic: 't', type: 'x', payload, idempotencyKey: 'k-1' }, limits);
      await expect(e.transaction(async (tx) => {
        await e.store.insert(tx, [keyed(1)]);
        throw new Error('rolled back');
      })).rejects.toThrow('rolled back');
      const second = keyed(2);
      expect(await e.transaction((tx) => e.store.insert(tx, [second]))).toEqual([second.id]);
      expect(await e.store.purgeIdempotencyKeys(100)).toBe(0);
      await e.controls.ageIdempotencyKeys(25 * 60 * 60);
      expect(await e.store.purgeIdempotencyKeys(100)).toBe(1);
      const third = keyed(3);
      expect(await e.transaction((tx) => e.store.insert(tx, [third]))).toEqual([third.id]);
    });

    it('migrates idempotently: migrating again adds no rows and loses none', async () => {
      const e = await setup();
      const m = msg('t', null);
      await e.transaction((tx) => e.store.insert(tx, [m]));
      await e.store.migrate();
      await e.store.migrate();
      expect(await e.controls.rowCount()).toBe(1);
      expect((await e.store.claim({ owner, leaseMs: 30_000, limit: 10 })).messages.map((x) => x.id)).toEqual([m.id]);
    });
  });
}
