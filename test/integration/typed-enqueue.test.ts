import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MessageRegistry } from '../../src/consumer/message-registry.js';
import { MessageValidationError, OutboxerError } from '../../src/core/errors.js';
import { Outbox } from '../../src/core/outbox.js';
import { fromPglite, pgliteExecutor } from '../../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';

describe('typed enqueue through a message registry', () => {
  const db = new PGlite();
  const store = new PostgresOutboxStore(fromPglite(db), { schema: 'typed' });
  const registry = new MessageRegistry().register('order.paid', z.object({ orderId: z.number().int(), amountCents: z.number().int().nonnegative() }));
  const outbox = new Outbox(store, { registry });
  const stored = async () => (await pgliteExecutor(db).query('SELECT type, payload FROM typed.outbox ORDER BY seq', [])).rows;

  beforeAll(() => store.migrate());
  afterAll(() => db.close());

  it('stores the schema output of a valid payload (unknown keys stripped)', async () => {
    await db.transaction((tx) => outbox.enqueue(tx, { topic: 'orders.paid', type: 'order.paid', payload: { orderId: 7, amountCents: 1250, secret: 'x' } }));
    expect(await stored()).toEqual([{ type: 'order.paid', payload: { orderId: 7, amountCents: 1250 } }]);
  });

  it('refuses an invalid payload before anything is stored, naming the path but not the value', async () => {
    const error = await db
      .transaction((tx) => outbox.enqueue(tx, { topic: 'orders.paid', type: 'order.paid', payload: { orderId: 'SECRET-VALUE', amountCents: 1 } }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(MessageValidationError);
    expect(String((error as Error).message)).toContain('orderId');
    expect(String((error as Error).message)).not.toContain('SECRET-VALUE');
    expect(await stored()).toHaveLength(1);
  });

  it('names the message id it was given when its payload does not match the schema, with its own code', async () => {
    const id = '01936b2e-5a2b-7c3d-8e4f-0123456789ab';
    const error = await db
      .transaction((tx) => outbox.enqueue(tx, { id, topic: 'orders.paid', type: 'order.paid', payload: { orderId: 1.5, amountCents: 1 } }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ code: 'OUTBOXER_SCHEMA_MISMATCH' });
    expect(String((error as Error).message)).toContain(`message ${id}`);
  });

  it('refuses a type the registry does not know, without resolving it by name', async () => {
    const error = await db
      .transaction((tx) => outbox.enqueue(tx, { topic: 'orders.paid', type: 'constructor', payload: {} }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(OutboxerError);
    expect(await stored()).toHaveLength(1);
  });
});
