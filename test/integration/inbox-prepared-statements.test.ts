import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { Inbox } from '../../src/consumer/inbox.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresInboxStore } from '../../src/stores/postgres/inbox/index.js';
import { services, uniqueName } from '../support/services.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An inbox on a pool of one connection (so its prepared statements can be read back), in its own schema. */
async function setup(preparedStatements?: boolean) {
  const schema = uniqueName('inboxprep');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
  const store = new PostgresInboxStore(fromPgPool(pool), { schema, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
  await store.migrate();
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });
  const inbox = new Inbox(store, { consumer: 'billing' });
  const prepared = async () => (await pool.query(`SELECT name FROM pg_prepared_statements WHERE name LIKE 'outboxer\\_%'`)).rows.length;
  return { store, inbox, prepared };
}

function message(): ReceivedMessage {
  return {
    id: randomUUID(),
    topic: 'orders.created',
    type: 'OrderCreated',
    key: 'o-1',
    payload: { n: 1 },
    headers: {},
    contentType: 'application/json',
    deliveryCount: 1,
  };
}

describe('inbox prepared statements (PostgreSQL)', () => {
  it('prepares the claim once per connection, and a repeated claim of a handled message is a duplicate', async () => {
    const { inbox, prepared } = await setup();
    const first = message();
    expect(await inbox.handle(first, async () => undefined)).toMatchObject({ status: 'processed' });
    expect(await prepared()).toBe(1);
    expect(await inbox.handle(message(), async () => undefined)).toMatchObject({ status: 'processed' });
    expect(await prepared()).toBe(1);
    expect(await inbox.handle(first, async () => undefined)).toMatchObject({ status: 'duplicate', state: 'processed' });
  });

  it('prepares the failure record too, and neither when turned off (poolers that cannot keep them)', async () => {
    const on = await setup();
    expect(await on.inbox.handle(message(), () => Promise.reject(new Error('boom')))).toMatchObject({ status: 'retry' });
    expect(await on.prepared()).toBe(2);
    const off = await setup(false);
    expect(await off.inbox.handle(message(), async () => undefined)).toMatchObject({ status: 'processed' });
    expect(await off.inbox.handle(message(), () => Promise.reject(new Error('boom')))).toMatchObject({ status: 'retry' });
    expect(await off.prepared()).toBe(0);
  });

  it.each([
    [{ preparedStatements: 'yes' }, /^inbox store option preparedStatements: must be true or false$/],
    [{ tabel: 'x' }, /^inbox store option tabel: is not an option \(known: schema, table, preparedStatements\)$/],
    [{ schema: 7 }, /^inbox store option schema: must be a string/],
  ])('refuses %j with OUTBOXER_INVALID_OPTION naming the option', (options, message) => {
    const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
    cleanups.push(() => pool.end());
    expect(() => new PostgresInboxStore(fromPgPool(pool), options as never)).toThrow(
      expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION', message: expect.stringMatching(message) }),
    );
  });
});
