import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import type { PgTransactionInput } from '../../src/stores/postgres/pg-transaction.js';
import { services, uniqueName } from '../support/services.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One connection (so its prepared statements can be read back) and a store on its own schema. */
async function setup(preparedStatements?: boolean) {
  const schema = uniqueName('prep');
  const client = new pg.Client({ connectionString: services.postgresUrl });
  await client.connect();
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
  await store.migrate();
  cleanups.push(async () => {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
    await pool.end();
  });
  const prepared = async (executor: { query(text: string): Promise<pg.QueryResult> }) =>
    (await executor.query(`SELECT name FROM pg_prepared_statements WHERE name LIKE 'outboxer\\_%'`)).rows.length;
  return { schema, client, pool, store, prepared };
}

async function enqueueOn(client: pg.Client, outbox: Outbox<PgTransactionInput, PostgresOutboxStore>): Promise<void> {
  await client.query('BEGIN');
  await outbox.enqueue(client, { topic: 'orders.created', type: 'OrderCreated', key: 'o-1', payload: { n: 1 } });
  await client.query('COMMIT');
}

describe('prepared statements (PostgreSQL)', () => {
  it("prepares the insert on the caller's node-postgres connection and the store's own statements on its pool", async () => {
    const { client, pool, store, prepared } = await setup();
    await enqueueOn(client, new Outbox(store));
    expect(await prepared(client)).toBe(1);
    expect(await prepared(pool)).toBe(0);
    expect((await store.stats()).pending).toBe(1);
    // The pool has a single connection: the stats statement was prepared on it.
    expect(await prepared(pool)).toBe(1);
  });

  it('runs plain parameterized statements when turned off (poolers that cannot keep them)', async () => {
    const { client, pool, store, prepared } = await setup(false);
    await enqueueOn(client, new Outbox(store));
    expect((await store.stats()).pending).toBe(1);
    expect(await prepared(client)).toBe(0);
    expect(await prepared(pool)).toBe(0);
  });

  it('keeps working when the table is dropped and created again under a prepared statement', async () => {
    const { client, schema, store } = await setup();
    const outbox = new Outbox(store);
    await enqueueOn(client, outbox);
    expect((await store.stats()).pending).toBe(1);
    await client.query(`DROP SCHEMA "${schema}" CASCADE`);
    await store.migrate();
    await enqueueOn(client, outbox);
    expect((await store.stats()).pending).toBe(1);
  });

  it('refuses a preparedStatements option that is not a boolean', () => {
    const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
    cleanups.push(() => pool.end());
    const options = { preparedStatements: 'yes' } as unknown as { preparedStatements: boolean };
    expect(() => new PostgresOutboxStore(fromPgPool(pool), options)).toThrow(ConfigurationError);
  });
});
