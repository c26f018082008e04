import { afterEach, describe, expect, it } from 'vitest';
import type { NewOutboxMessage } from '../../src/core/message.js';
import { validateMessage } from '../../src/core/validate-message.js';
import { readFromStart } from '../support/partition-relay-fixture.js';
import type { StoreEnvironment, StoreHarness } from './store-harness.js';

const limits = { maxPayloadBytes: 256 * 1024 };

export function msg(topic: string, key: string | null, payload: unknown = { n: 1 }, extra: { delayMs?: number; destination?: string } = {}): NewOutboxMessage {
  return validateMessage({ topic, type: 'test.event', key: key ?? undefined, payload, ...extra }, limits);
}

/** The pending messages as a relay reads them (every partition from its start), in store order. */
const readAll = <Tx>(e: StoreEnvironment<Tx>) => readFromStart(e.store.reader, 64, 50);

/**
 * The behaviour every outbox store shares, run against each real database: the writer, operator, schema and
 * housekeeping roles (the read path has its own suite, reader-conformance). It talks to the store only through
 * the port and the harness's `TestControls`, so any database can run it.
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
      expect(await e.controls.rowCount()).toBe(0);
      await e.transaction((tx) => e.store.insert(tx, [msg('a.b', null)]));
      expect(await e.controls.rowCount()).toBe(1);
    });

    it('stores in input order with the payload JSON, headers and no attempt yet', async () => {
      const e = await setup();
      const input = [msg('t.one', 'k', { a: 1 }), msg('t.two', 'k', { b: [1, 2] }), msg('t.three', null, 'text')];
      await e.transaction((tx) => e.store.insert(tx, input));
      const read = await readAll(e);
      expect(read.map((m) => m.id)).toEqual(input.map((m) => m.id));
      expect(read.map((m) => JSON.parse(m.body as string))).toEqual([{ a: 1 }, { b: [1, 2] }, 'text']);
      expect(read.every((m) => m.attempts === 1)).toBe(true); // a read counts the publish it is for
    });

    it('lists dead messages with their reason, and retries or purges them on request, touching only dead ones', async () => {
      const e = await setup();
      const poison = msg('t', 'k');
      await e.transaction((tx) => e.store.insert(tx, [poison]));
      await e.controls.parkAllAsDead('too large for broker');
      const after = msg('t', 'k');
      await e.transaction((tx) => e.store.insert(tx, [after]));
      expect(await e.store.listDead(10)).toMatchObject([{ id: poison.id, reason: 'too large for broker', attempts: 0, topic: 't' }]);
      expect(await e.store.retryDead([poison.id, after.id])).toBe(1);
      expect(await e.store.stats()).toMatchObject({ dead: 0, pending: 2 });
      expect((await readAll(e)).map((m) => m.id)).toEqual([poison.id, after.id]);
      await e.controls.parkAllAsDead('still too large');
      expect(await e.store.purgeDead([after.id])).toBe(1);
      expect(await e.store.purgeDead('all')).toBe(1);
      expect(await e.store.listDead(10)).toEqual([]);
      expect(await e.controls.rowCount()).toBe(0);
    });

    it("keeps each row's destination, and lists, retries and purges dead messages of one destination only", async () => {
      const e = await setup();
      const own = msg('t', 'k'),
        partner = msg('t', 'k', {}, { destination: 'partner' }),
        ledger = msg('t', null, {}, { destination: 'ledger' });
      await e.transaction((tx) => e.store.insert(tx, [own, partner, ledger]));
      await e.controls.insertPlain([{ topic: 't', type: 'x', payload: '{}', destination: 'partner' }]);
      const read = await readAll(e);
      expect(read.map((m) => m.destination)).toEqual([null, 'partner', 'ledger', 'partner']);
      await e.controls.parkAllAsDead('gone');
      expect((await e.store.listDead(10)).map((d) => d.destination)).toEqual([null, 'partner', 'ledger', 'partner']);
      expect((await e.store.listDead(10, { destination: 'partner' })).map((d) => d.id)).toEqual([partner.id, read[3]?.id]);
      expect((await e.store.listDead(10, { destination: null })).map((d) => d.id)).toEqual([own.id]);
      expect(await e.store.retryDead('all', { destination: 'partner' })).toBe(2);
      expect(await e.store.retryDead([own.id, ledger.id], { destination: 'ledger' })).toBe(1);
      expect(await e.store.purgeDead('all', { destination: 'ledger' })).toBe(0);
      expect(await e.store.purgeDead('all', { destination: null })).toBe(1);
      expect((await readAll(e)).map((m) => m.id)).toEqual([partner.id, ledger.id, read[3]?.id]);
    });

    it('retries every dead message in bounded batches', async () => {
      const e = await setup();
      await e.transaction((tx) =>
        e.store.insert(
          tx,
          Array.from({ length: 1205 }, () => msg('t', null)),
        ),
      );
      await e.controls.parkAllAsDead('x');
      expect(await e.store.retryDead('all')).toBe(1205);
      expect(await e.store.stats()).toMatchObject({ pending: 1205, dead: 0 });
    });

    it('keeps delayed messages until their time, on the database clock', async () => {
      const e = await setup();
      const later = msg('t', null, {}, { delayMs: 3_600_000 });
      await e.transaction((tx) => e.store.insert(tx, [later]));
      expect(await e.store.stats()).toMatchObject({ pending: 0, scheduled: 1 });
      await e.controls.makeAvailableNow();
      expect(await e.store.stats()).toMatchObject({ pending: 1, scheduled: 0 });
    });

    it('relays a row written by plain SQL exactly like an enqueue (the plain-SQL table contract)', async () => {
      const e = await setup();
      await e.controls.insertPlain([
        { topic: 'orders.created', type: 'order.created', payload: '{"id": 7}' },
        { topic: 'orders.created', key: 'o-7', type: 'order.created', payload: '{"id": 8}', headers: { tenant: 'acme' } },
      ]);
      const read = await readAll(e);
      expect(read).toHaveLength(2);
      const [first, second] = read;
      expect(first?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(first).toMatchObject({ topic: 'orders.created', type: 'order.created', key: null, headers: {} });
      expect(JSON.parse((first?.body as string | undefined) ?? '')).toEqual({ id: 7 });
      expect(second).toMatchObject({ key: 'o-7', headers: { tenant: 'acme' } });
    });

    it('reports counts by state and the age of the oldest pending message', async () => {
      const e = await setup();
      await e.transaction((tx) => e.store.insert(tx, [msg('t', null), msg('t', null), msg('t', null, {}, { delayMs: 600_000 })]));
      await e.controls.ageCreated(90);
      const stats = await e.store.stats();
      expect(stats).toMatchObject({ pending: 2, scheduled: 1, published: 0, dead: 0 });
      expect(stats.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(90);
      expect(stats.oldestPendingAgeSeconds).toBeLessThan(200);
    });

    it('purges retained published rows once their retention ran out', async () => {
      const e = await setup({ retainPublishedMs: 3_600_000 });
      await e.transaction((tx) => e.store.insert(tx, [msg('t', null)]));
      await e.controls.markAllPublished();
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
      expect((await readAll(e)).map((m) => JSON.parse(m.body as string))).toEqual([1, 3, 4, JSON.parse(plain.body as string)]);
    });

    it('forgets an idempotency key when its transaction rolls back, and after the window', async () => {
      const e = await setup();
      const keyed = (payload: number) => validateMessage({ topic: 't', type: 'x', payload, idempotencyKey: 'k-1' }, limits);
      await expect(
        e.transaction(async (tx) => {
          await e.store.insert(tx, [keyed(1)]);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
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
      expect((await readAll(e)).map((x) => x.id)).toEqual([m.id]);
    });
  });
}
