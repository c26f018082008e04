import { describe, expect, it } from 'vitest';
import { MessageValidationError } from '../../src/core/errors.js';
import { Inbox } from '../../src/consumer/inbox.js';
import type { RawDelivery, ReceivedMessage } from '../../src/consumer/received-message.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { type InboxHarness, inboxScenes, message } from './inbox-conformance.js';

const noDelay = { baseDelayMs: 10, maxDelayMs: 20, jitter: 0 };

/** The delivery a broker consumer would hand the inbox for `m`. */
export function deliveryOf(m: ReceivedMessage, body: Uint8Array = Buffer.from(JSON.stringify(m.payload))): RawDelivery {
  return {
    id: m.id,
    type: m.type,
    key: m.key ?? undefined,
    topic: m.topic,
    headers: { ...m.headers },
    body,
    contentType: 'application/json',
    deliveryCount: 1,
  };
}

/** `Inbox.handleBatch` on one store: several deliveries in one transaction, all or nothing; declined by a store that claims one by one. */
export function describeInboxBatchConformance<Tx = SqlExecutor>(harness: InboxHarness<Tx>): void {
  if (harness.batches !== true) {
    describe(`inbox batches: ${harness.name}`, () => {
      const setup = inboxScenes(harness);
      it('declines every batch on a store that claims one by one: nothing runs, nothing is recorded', async () => {
        const { env, apply, count, entry } = await setup();
        const inbox = new Inbox(env.store, { consumer: 'billing' });
        const m = message();
        expect(await inbox.handleBatch([deliveryOf(m), deliveryOf(message({ key: 'k2' }))], apply('billing'))).toBeUndefined();
        expect(await count()).toBe(0);
        expect(await entry('billing', m.id)).toBeUndefined();
      });
    });
    return;
  }
  describe(`inbox batches: ${harness.name}`, () => {
    const setup = inboxScenes(harness);

    it('claims every message, runs the claimed handlers in the order given, and skips settled messages and later copies', async () => {
      const { env, apply, count, entry } = await setup();
      const inbox = new Inbox(env.store, { consumer: 'billing', retry: { ...noDelay, maxAttempts: 2 } });
      const [settled, failedOnce, dead, fresh, copied] = Array.from({ length: 5 }, (_, n) => message({ key: `k${n}`, payload: { n } }));
      const failing = async () => {
        throw new Error('not now');
      };
      expect((await inbox.handle(settled!, apply('billing'))).status).toBe('processed');
      expect((await inbox.handle(failedOnce!, failing)).status).toBe('retry');
      expect((await inbox.handle(dead!, failing)).status).toBe('retry');
      expect((await inbox.handle(dead!, failing)).status).toBe('dead');
      const ran: string[] = [];
      const outcomes = await inbox.handleBatch(
        [settled!, failedOnce!, fresh!, copied!, dead!, copied!].map((m) => deliveryOf(m)),
        async (m, tx) => {
          ran.push(m.id);
          await apply('billing')(m, tx);
        },
      );
      expect(outcomes).toEqual([
        { status: 'duplicate', state: 'processed' },
        { status: 'processed', attempts: 2 },
        { status: 'processed', attempts: 1 },
        { status: 'processed', attempts: 1 },
        { status: 'duplicate', state: 'dead' },
        { status: 'duplicate', state: 'processed' },
      ]);
      expect(ran).toEqual([failedOnce!.id, fresh!.id, copied!.id]);
      for (const m of [settled!, failedOnce!, fresh!, copied!]) expect(await count(m.id)).toBe(1);
      expect(await entry('billing', failedOnce!.id)).toMatchObject({ state: 'processed', attempts: 2 });
      expect(await entry('billing', dead!.id)).toMatchObject({ state: 'dead', attempts: 2 });
      expect(await env.store.stats('billing')).toEqual({ processed: 4, failed: 0, dead: 1 });
    });

    it('rolls the whole batch back when a handler fails and records nothing: each is charged alone, where its own failure counts', async () => {
      const { env, apply, count, entry } = await setup();
      const retried: string[] = [];
      const inbox = new Inbox(env.store, { consumer: 'billing', retry: { ...noDelay, maxAttempts: 5 }, hooks: { onRetry: (e) => retried.push(e.id) } });
      const [a, b, c] = Array.from({ length: 3 }, (_, n) => message({ key: `k${n}`, payload: { n } }));
      const batch = [a!, b!, c!].map((m) => deliveryOf(m));
      let failB = true;
      const handler = async (m: ReceivedMessage, tx: Tx) => {
        await apply('billing')(m, tx);
        if (m.id === b!.id && failB) throw new Error('b refused');
      };
      expect(await inbox.handleBatch(batch, handler)).toBeUndefined();
      expect(retried).toEqual([]);
      expect(await count()).toBe(0);
      for (const m of [a!, b!, c!]) expect(await entry('billing', m.id)).toBeUndefined();
      expect(await inbox.handleDelivery(deliveryOf(b!), handler)).toMatchObject({ status: 'retry', attempts: 1, error: 'Error: b refused' });
      failB = false;
      expect(await inbox.handleBatch(batch, handler)).toEqual([
        { status: 'processed', attempts: 1 },
        { status: 'processed', attempts: 2 },
        { status: 'processed', attempts: 1 },
      ]);
      expect(await count()).toBe(3);
    });

    it('never reports a message processed whose effect did not commit, when a handler swallows a database error', async () => {
      const { env, dialect, p, entry } = await setup();
      const unique = dialect.table('unique_effects');
      await env.sql(`CREATE TABLE ${unique} (message_id ${dialect.uuidType} PRIMARY KEY)`);
      const inbox = new Inbox(env.store, { consumer: 'billing', retry: { ...noDelay, maxAttempts: 5 } });
      const [a, b, c] = Array.from({ length: 3 }, (_, n) => message({ key: `k${n}`, payload: { n } }));
      await env.sql(`INSERT INTO ${unique} (message_id) VALUES (${p(1)})`, [c!.id]);
      const swallowing = async (m: ReceivedMessage, tx: Tx) => {
        try {
          await dialect.write(tx, `INSERT INTO ${unique} (message_id) VALUES (${p(1)})`, [m.id]);
        } catch {
          // "already there": the idiom that breaks a PostgreSQL transaction without a savepoint
        }
      };
      const outcomes = await inbox.handleBatch(
        [a!, b!, c!].map((m) => deliveryOf(m)),
        swallowing,
      );
      const effects = async (id: string) => Number((await env.sql(`SELECT ${dialect.count} AS n FROM ${unique} WHERE message_id = ${p(1)}`, [id]))[0]?.n);
      for (const [index, m] of [a!, b!].entries()) {
        if (outcomes?.[index]?.status === 'processed') {
          expect(await effects(m.id)).toBe(1);
          expect(await entry('billing', m.id)).toMatchObject({ state: 'processed' });
        } else {
          expect(await effects(m.id)).toBe(0);
          expect(await entry('billing', m.id)).toBeUndefined();
        }
      }
    });

    it('records nothing for a MessageValidationError thrown in a batch; handled alone, the message goes dead at once', async () => {
      const { env, count, entry } = await setup();
      const inbox = new Inbox(env.store, { consumer: 'billing', retry: { ...noDelay, maxAttempts: 5 } });
      const [a, b] = [message({ key: 'k1' }), message({ key: 'k2' })];
      const refusing = async (m: ReceivedMessage) => {
        if (m.id === b.id) throw new MessageValidationError('OUTBOXER_SCHEMA_MISMATCH', 'amount is negative');
      };
      expect(await inbox.handleBatch([deliveryOf(a), deliveryOf(b)], refusing)).toBeUndefined();
      expect(await entry('billing', a.id)).toBeUndefined();
      expect(await entry('billing', b.id)).toBeUndefined();
      expect(await inbox.handleDelivery(deliveryOf(b), refusing)).toEqual({
        status: 'dead',
        attempts: 1,
        reason: 'OUTBOXER_SCHEMA_MISMATCH: amount is negative',
      });
      expect(await count()).toBe(0);
    });

    it('runs nothing and records nothing when a delivery of the batch cannot be rebuilt, so each is handled alone', async () => {
      const { env, apply, count, entry } = await setup();
      const inbox = new Inbox(env.store, { consumer: 'billing' });
      const good = message({ key: 'k1' });
      const broken = message({ key: 'k2' });
      const outcomes = await inbox.handleBatch([deliveryOf(good), deliveryOf(broken, Buffer.from('{"n": 1'))], apply('billing'));
      expect(outcomes).toBeUndefined();
      expect(await count()).toBe(0);
      expect(await entry('billing', good.id)).toBeUndefined();
      expect(await entry('billing', broken.id)).toBeUndefined();
    });
  });
}
