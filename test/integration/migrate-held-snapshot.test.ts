import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { services } from '../support/services.js';

describe('migrate on a fresh table while another session holds a snapshot', () => {
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 3 });
  const schema = `held_snapshot_${process.pid}_${Date.now()}`;
  afterEach(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('builds the new table indexes in its own transaction instead of waiting for the snapshot to end', async () => {
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query('SELECT 1');
      await new PostgresOutboxStore(fromPgPool(pool), { schema }).migrate();
      const valid = await pool.query(
        `SELECT count(*)::int AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname LIKE 'outbox_p%' AND i.indisvalid`,
        [schema],
      );
      expect(valid.rows[0]?.n).toBeGreaterThanOrEqual(2);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  }, 20_000);
});
