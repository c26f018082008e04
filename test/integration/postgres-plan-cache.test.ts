import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { msg } from '../conformance/store-conformance.js';
import { services, uniqueName } from '../support/services.js';

const P = 64;

interface PreparedPlans {
  statement: string;
  generic: number;
  custom: number;
}

/**
 * The relay's hot statements are prepared once per connection and then run from PostgreSQL's generic plan: planning the
 * read anew on every execution (a custom plan) cost about twice its execution (read-partitions.ts). One connection
 * (a pool of one), so `pg_prepared_statements` shows every execution.
 */
describe('PostgreSQL plan cache: the relay read and completion run from generic plans', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it('after its first executions, the read plans nothing per execution, nor does the completion', async () => {
    const schema = uniqueName('plans');
    const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
    cleanup = async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    };
    const database = fromPgPool(pool);
    const store = new PostgresOutboxStore(database, { schema });
    await store.migrate();
    const { relayId } = await store.leases.join({ name: 'plans', leaseMs: 60_000 });
    const leases = await store.leases.acquire(relayId, P);
    // a backlog the planner knows about: on a near-empty table every plan is cheap, and the generic one wins anyway
    await pool.query(`INSERT INTO "${schema}".outbox (topic, type, key, payload)
      SELECT 'a.b', 'test.event', 'k-' || (g % 1000), json_build_object('n', g) FROM generate_series(1, 100000) g`);
    await pool.query(`ANALYZE "${schema}".outbox`);
    const epochOf = (partition: number) => leases.find((l) => l.partition === partition)?.epoch ?? '0';
    for (let round = 0; round < 10; round++) {
      await database.transaction((tx) => store.insert(tx, [msg('a.b', `k${round % 3}`), msg('a.b', null)]));
      const read = await store.reader.read(
        relayId,
        P,
        // a lane's share of the partitions, as a relay draining a backlog reads them (the plan choice depends on it)
        leases.slice(0, 22).map((l) => ({ partition: l.partition, epoch: l.epoch, after: null, recheck: null, limit: 23 })),
      );
      const partitions = [...new Set(read.messages.map((m) => m.partition))];
      const outcomes = await store.reader.complete(
        relayId,
        partitions.map((partition) => {
          const mine = read.messages.filter((m) => m.partition === partition);
          return { partition, epoch: epochOf(partition), published: mine.map((m) => m.id), publishedSeqs: mine.map((m) => m.seq), failed: [], held: [] };
        }),
      );
      expect(outcomes.every((o) => o.applied && o.skipped.length === 0)).toBe(true);
    }
    // the completion sets lock_timeout for its own statement only: the pooled connection keeps its own setting
    expect((await pool.query<{ lock_timeout: string }>('SHOW lock_timeout')).rows).toEqual([{ lock_timeout: '0' }]);
    const plans = (
      await pool.query<PreparedPlans>(
        `SELECT left(statement, 40) AS statement, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements
        WHERE statement LIKE 'WITH snap%' OR statement LIKE 'WITH locked%'`,
      )
    ).rows;
    const read = plans.filter((p) => p.statement.startsWith('WITH snap'));
    const completion = plans.filter((p) => p.statement.startsWith('WITH locked'));
    // PostgreSQL tries five custom plans before it weighs the generic one; every later execution uses the generic plan
    expect(read).toEqual([{ statement: expect.any(String), generic: 5, custom: 5 }]);
    expect(completion).toEqual([{ statement: expect.any(String), generic: 5, custom: 5 }]);
  });
});
