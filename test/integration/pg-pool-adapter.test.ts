import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { fromPgPool } from '../../src/stores/postgres/index.js';
import { services } from '../support/services.js';

const admin = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
afterAll(() => admin.end());

/** A pool that hands out real clients and lets the test see the one in use. */
function watchedPool() {
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
  pool.on('error', () => undefined);
  const checkedOut: pg.PoolClient[] = [];
  return {
    pool,
    checkedOut,
    adapter: fromPgPool({
      query: (...args: Parameters<pg.Pool['query']>) => pool.query(...args),
      end: () => pool.end(),
      connect: async () => {
        const client = await pool.connect();
        checkedOut.push(client);
        return client;
      },
    } as unknown as pg.Pool),
  };
}

describe('fromPgPool', () => {
  it('turns a backend killed between two statements of a transaction into a rejected transaction, not a thrown error', async () => {
    const { pool, checkedOut, adapter } = watchedPool();
    try {
      const outcome = adapter.transaction(async (tx) => {
        const { rows } = await tx.query('SELECT pg_backend_pid() AS pid');
        const client = checkedOut[0] as pg.PoolClient;
        const ended = new Promise((resolve) => client.once('end', resolve));
        await admin.query('SELECT pg_terminate_backend($1)', [(rows[0] as { pid: number }).pid]);
        await ended; // the termination reached the idle client: without a listener it would have thrown
        await tx.query('SELECT 1');
      });
      await expect(outcome).rejects.toThrow();
      // the broken client was not returned for reuse: the next transaction gets a working one
      await expect(adapter.transaction((tx) => tx.query('SELECT 1 AS one'))).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await pool.end();
    }
  });
});
