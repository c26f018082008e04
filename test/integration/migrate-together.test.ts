import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresInboxStore } from '../../src/stores/postgres/inbox/postgres-inbox-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { services, uniqueName } from '../support/services.js';

/** A producer and a consumer service starting at once on a fresh schema (the README's examples in one process). */
describe('migrations of the outbox and the inbox at once', () => {
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 8 });
  const schema = uniqueName('mig');
  afterEach(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('both succeed on a fresh schema: they share its bookkeeping table', async () => {
    const database = fromPgPool(pool);
    const rounds = await Promise.allSettled([
      new PostgresOutboxStore(database, { schema }).migrate(),
      new PostgresInboxStore(database, { schema }).migrate(),
      new PostgresOutboxStore(database, { schema, table: 'second_outbox' }).migrate(),
    ]);
    expect(rounds.map((round) => round.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const recorded = await pool.query(`SELECT DISTINCT table_name FROM "${schema}".outboxer_migrations ORDER BY 1`);
    expect(recorded.rows.map((row: { table_name: string }) => row.table_name)).toEqual(['outbox', 'outbox_inbox', 'second_outbox']);
  });
});
