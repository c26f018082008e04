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

  /**
   * Runs the read over every partition (each from `after`, with the recheck range `(0, recheckTo]` when given) in a
   * transaction of its own, from the generic plan the relay's prepared read runs from, and says whether it assigned
   * that transaction an xid.
   */
  async function readInTransaction(
    client: pg.PoolClient,
    after: string | null = null,
    recheckTo: string | null = null,
  ): Promise<{ rows: TaggedRow[]; assigned: string | null }> {
    const text = readPartitions.sql(readerTables({ schema, table: 'outbox' }), P);
    const each = <T>(value: T) => ALL.map(() => value);
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
      const recheck = recheckTo === null ? { from: null, to: null, tag: null } : { from: '0', to: recheckTo, tag: '1' };
      const args = readPartitions.params(ALL, each(after), each(recheck.from), each(recheck.to), each(recheck.tag), each(16), undefined);
      const { rows } = await client.query<TaggedRow>({ name: `read-tag-${schema}`, text, values: [...args] });
      const { rows: xid } = await client.query<{ assigned: string | null }>('SELECT pg_current_xact_id_if_assigned()::text AS assigned');
      return { rows, assigned: xid[0]?.assigned ?? null };
    } finally {
      await client.query('ROLLBACK');
    }
  }

  it('assigns no xid for an empty read or one of recheck or due rows only, and tags each fresh row with the xid it assigned, from the generic plan', async () => {
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

      await database.transaction((tx) => store.insert(tx, [msg('a.b', 'k1'), msg('a.b', 'k2'), msg('a.b', null)]));
      const { rows: top } = await client.query<{ seq: string }>(`SELECT max(seq)::text AS seq FROM "${schema}".outbox`);
      const last = top[0]?.seq ?? null;
      // a recheck range whose tag every transaction has passed: the rows come back from the recheck branch only
      const recheckOnly = await readInTransaction(client, last, last);
      expect(recheckOnly.rows.map((r) => r.source).sort()).toEqual([null, 'recheck', 'recheck', 'recheck']);
      expect(recheckOnly.assigned).toBeNull();
      expect(recheckOnly.rows.every((r) => r.tag === null)).toBe(true);

      const fresh = await readInTransaction(client);
      expect(fresh.assigned).not.toBeNull();
      expect(fresh.rows.filter((r) => r.source === 'fresh').map((r) => r.tag)).toEqual([fresh.assigned, fresh.assigned, fresh.assigned]);
      expect(fresh.rows.filter((r) => r.source === null).map((r) => r.tag)).toEqual([null]);

      await client.query(`UPDATE "${schema}".outbox SET due_at = now() - interval '1 second' WHERE key = 'k1'`);
      const dueOnly = await readInTransaction(client, last);
      expect(dueOnly.rows.map((r) => r.source).sort()).toEqual(['due', null]);
      expect(dueOnly.assigned).toBeNull();
      expect(dueOnly.rows.every((r) => r.tag === null)).toBe(true);
    } finally {
      client.release();
    }
  });
});
