import { afterEach, describe, expect, it } from 'vitest';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import type { Relay } from '../../src/core/relay.js';
import { readFromStart } from '../support/partition-relay-fixture.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';
import type { AdapterHarness, AdapterRig, OrmTransactionContext } from './adapter-harness.js';

const BINARY = Uint8Array.from([0x00, 0x01, 0xff, 0x80, 0x7b, 0x00]);
const message = (n: number, key = `order-${n}`) => ({ topic: 'orders.created', type: 'order.created', key, payload: { n } });
/** A relay that would poll only every 30 s: a publish within seconds of the commit proves the wake-up. */
const sleepy = { pollIntervalMs: 30_000, maxPollIntervalMs: 30_000 };

class Rollback extends Error {}

/**
 * I1 through an ORM's own transaction: what every adapter of the transaction port must prove on every database
 * its ORM speaks, against the real server. The suite talks to the ORM only through the harness.
 */
export function describeAdapterConformance(harness: AdapterHarness): void {
  describe(`${harness.orm} on ${harness.database}: the ORM's transaction and the outbox`, () => {
    let rig: AdapterRig | undefined;
    const relays: Relay[] = [];
    afterEach(async () => {
      await Promise.all(relays.splice(0).map((relay) => relay.stop()));
      await rig?.cleanup();
      rig = undefined;
    });
    const setup = async () => {
      rig = await harness.setup();
      // each store takes its own dialect's transactions; the suite hands every one the adapter's
      return { rig, outbox: new Outbox(rig.store as unknown as StoreForOutbox<OutboxTransaction>) };
    };
    const pending = async (r: AdapterRig) => readFromStart(r.store.reader, 64, 50);

    it("commits the ORM's business row and the message together", async () => {
      const { rig, outbox } = await setup();
      const id = await rig.transaction(async ({ tx, insertOrder }) => {
        await insertOrder(1);
        return outbox.enqueue(tx, message(1));
      });
      expect(await rig.orderExists(1)).toBe(true);
      expect((await pending(rig)).map((m) => m.id)).toEqual([id]);
    });

    it('rolls them back together when the transaction fails after the enqueue', async () => {
      const { rig, outbox } = await setup();
      const attempt = rig.transaction(async ({ tx, insertOrder }) => {
        await insertOrder(2);
        await outbox.enqueue(tx, message(2));
        throw new Rollback('business rule failed');
      });
      await expect(attempt).rejects.toBeInstanceOf(Rollback);
      expect(await rig.orderExists(2)).toBe(false);
      expect(await rig.controls.rowCount()).toBe(0);
    });

    it('keeps enqueueMany in order, with binary bodies and delayed messages, in one transaction', async () => {
      const { rig, outbox } = await setup();
      const ids = await rig.transaction(async ({ tx, insertOrder }) => {
        await insertOrder(3);
        return outbox.enqueueMany(tx, [
          message(1, 'k'),
          { topic: 'blobs', type: 'blob', key: 'k', payload: BINARY, contentType: 'application/x-protobuf' },
          message(3, 'k'),
          { ...message(4, 'later'), delayMs: 3_600_000 },
        ]);
      });
      expect(new Set(ids).size).toBe(4);
      const due = await pending(rig);
      expect(due.map((m) => m.id)).toEqual(ids.slice(0, 3));
      expect([...(due[1]?.body as Uint8Array)]).toEqual([...BINARY]);
      expect(due[1]?.contentType).toBe('application/x-protobuf');
      expect(due[0]?.body).toBe(JSON.stringify({ n: 1 }));
      expect(await rig.controls.rowCount()).toBe(4);
      await rig.controls.makeAvailableNow();
      expect((await pending(rig)).map((m) => m.id)).toContain(ids[3]);
    });

    it('answers a repeated idempotency key with the first id, within one transaction and across two', async () => {
      const { rig, outbox } = await setup();
      const keyed = (n: number) => ({ ...message(n), idempotencyKey: 'pay-42' });
      const [first, again] = await rig.transaction(({ tx }) => outbox.enqueueMany(tx, [keyed(1), keyed(2)]));
      const later = await rig.transaction(({ tx }) => outbox.enqueue(tx, keyed(3)));
      expect(again).toBe(first);
      expect(later).toBe(first);
      expect(await rig.controls.rowCount()).toBe(1);
    });

    it('forgets the idempotency key of a rolled-back transaction', async () => {
      const { rig, outbox } = await setup();
      const keyed = { ...message(1), idempotencyKey: 'refund-7' };
      const rolledBack = rig.transaction(async ({ tx }) => {
        await outbox.enqueue(tx, keyed);
        throw new Rollback('no');
      });
      await expect(rolledBack).rejects.toBeInstanceOf(Rollback);
      const id = await rig.transaction(({ tx }) => outbox.enqueue(tx, keyed));
      expect((await pending(rig)).map((m) => m.id)).toEqual([id]);
    });

    it('joins a nested transaction (savepoint): its rollback removes its message, the outer commit keeps the rest', async (context) => {
      const { rig, outbox } = await setup();
      const nested = rig.nested;
      if (nested === null) {
        await context.annotate(`${harness.orm} has no nested transactions`);
        expect(nested).toBeNull();
        return;
      }
      const outerId = await rig.transaction(async (outer) => {
        await outer.insertOrder(10);
        const id = await outbox.enqueue(outer.tx, message(10));
        const inner = nested(outer, async ({ tx, insertOrder }: OrmTransactionContext) => {
          await insertOrder(11);
          await outbox.enqueue(tx, message(11));
          throw new Rollback('inner only');
        });
        await expect(inner).rejects.toBeInstanceOf(Rollback);
        await nested(outer, ({ tx }) => outbox.enqueue(tx, message(12)));
        return id;
      });
      const ids = (await pending(rig)).map((m) => m.key);
      expect(ids).toEqual(['order-10', 'order-12']);
      expect(await rig.orderExists(10)).toBe(true);
      expect(await rig.orderExists(11)).toBe(false);
      expect(outerId).toBeTypeOf('string');
    });

    it('refuses every handle that is not inside an open transaction, with OUTBOXER_NOT_IN_TRANSACTION, and writes nothing', async () => {
      const { rig, outbox } = await setup();
      const mistakes = await rig.mistakes();
      expect(mistakes.length).toBeGreaterThan(0);
      for (const mistake of mistakes) {
        const attempt = Promise.resolve().then(() => outbox.enqueue(mistake.handle() as never, { ...message(1), idempotencyKey: `k-${mistake.name}` }));
        await expect(attempt, mistake.name).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
      }
      expect(await rig.controls.rowCount()).toBe(0);
      // a refused key was not reserved either: the same key stores a message in a real transaction
      const id = await rig.transaction(({ tx }) => outbox.enqueue(tx, { ...message(1), idempotencyKey: `k-${mistakes[0]?.name}` }));
      expect((await pending(rig)).map((m) => m.id)).toEqual([id]);
    });

    it("wakes the relay right after the ORM's commit when its transaction runs through outbox.transaction", async () => {
      const { rig, outbox } = await setup();
      const publisher = new RecordingPublisher();
      const relay = outbox.createRelay(publisher, sleepy);
      relays.push(relay);
      relay.start();
      await waitFor(() => relay.health().partitions.length === 64, { what: 'the relay to hold every partition' });
      // its first read found nothing; the next poll is 30 s away, so only a wake-up publishes within seconds
      const events: string[] = [];
      const wake = relay.wake.bind(relay);
      relay.wake = () => {
        events.push('wake');
        wake();
      };
      const id = await rig.runThroughOutbox(
        (run) =>
          outbox.transaction(async () => {
            const result = await run();
            events.push('committed');
            return result;
          }),
        async ({ tx, insertOrder }) => {
          await insertOrder(20);
          return outbox.enqueue(tx, message(20));
        },
      );
      expect(events).toEqual(['committed', 'wake']);
      await waitFor(() => publisher.delivered.some((m) => m.id === id), { timeoutMs: 10_000, what: 'the woken relay to publish' });
    });
  });
}
