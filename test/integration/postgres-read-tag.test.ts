import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { readPartitions } from '../../src/stores/postgres/reader/read-partitions.js';
import { readerTables } from '../../src/stores/postgres/reader/reader-tables.js';
import { msg } from '../conformance/store-conformance.js';
import { services, uniqueName } from '../support/services.js';

const P = 64;
const ALL = Array.from({ length: P }, (_, partition) => partition);

interface TaggedRow {
  source: string | null;
  tag: string | null;
}

describe('PostgreSQL read: the tag is an xid drawn only when a fresh branch returns rows', () => {
  let schema = '';
  let dropTable: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await dropTable?.();
    dropTable = undefined;
  });

  /** Runs the read over every partition in a transaction of its own, and says whether it assigned that transaction an xid. */
  async function readInTransaction(client: pg.PoolClient): Promise<{ rows: TaggedRow[]; assigned: string | null }> {
    const text = readPartitions.sql(readerTables({ schema, table: 'outbox' }), P);
    const none = ALL.map(() => null);
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<TaggedRow>(
        text,
        readPartitions.params(
          ALL,
          none,
          none,
          none,
          none,
          ALL.map(() => 16),
          undefined,
        ),
      );
      const { rows: xid } = await client.query<{ assigned: string | null }>('SELECT pg_current_xact_id_if_assigned()::text AS assigned');
      return { rows, assigned: xid[0]?.assigned ?? null };
    } finally {
      await client.query('ROLLBACK');
    }
  }

  it('assigns no xid for an empty read or one of due rows only, and tags each fresh row with the xid it assigned', async () => {
    schema = uniqueName('read_tag');
    const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 2 });
    dropTable = async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    };
    const database = fromPgPool(pool);
    const store = new PostgresOutboxStore(database, { schema });
    await store.migrate();
    const client = await pool.connect();
    try {
      const empty = await readInTransaction(client);
      expect(empty.assigned).toBeNull();
      expect(empty.rows.map((r) => r.tag)).toEqual([null]);

      await database.transaction((tx) => store.insert(tx, [msg('a.b', 'due-key')]));
      await client.query(`UPDATE "${schema}".outbox SET due_at = now() - interval '1 second'`);
      const dueOnly = await readInTransaction(client);
      expect(dueOnly.rows.map((r) => r.source).sort()).toEqual(['due', null]);
      expect(dueOnly.assigned).toBeNull();
      expect(dueOnly.rows.every((r) => r.tag === null)).toBe(true);

      await database.transaction((tx) => store.insert(tx, [msg('a.b', 'k1'), msg('a.b', 'k2'), msg('a.b', null)]));
      const fresh = await readInTransaction(client);
      expect(fresh.assigned).not.toBeNull();
      const bySource = (source: string | null) => fresh.rows.filter((r) => r.source === source).map((r) => r.tag);
      expect(bySource('fresh')).toEqual([fresh.assigned, fresh.assigned, fresh.assigned]);
      expect(bySource('due')).toEqual([null]);
      expect(bySource(null)).toEqual([null]);
    } finally {
      client.release();
    }
  });
});
