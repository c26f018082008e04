import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { fromPgPool, type PgDatabase } from '../../src/stores/postgres/database.js';
import { fromPglite } from '../../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { completeDeleting, completePublishedDeleting, completePublishedDirectDeleting } from '../../src/stores/postgres/reader/complete-partitions.js';
import { readPartitions } from '../../src/stores/postgres/reader/read-partitions.js';
import { readerTables } from '../../src/stores/postgres/reader/reader-tables.js';
import { msg } from '../conformance/store-conformance.js';
import { services, uniqueName } from '../support/services.js';

const P = 64;

interface PreparedPlans {
  statement: string;
  generic: number;
  custom: number;
}

interface PlanNode {
  'Node Type': string;
  'Subplan Name'?: string;
  'One-Time Filter'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Output?: string[];
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

const descendants = (node: PlanNode): PlanNode[] => (node.Plans ?? []).flatMap((child) => [child, ...descendants(child)]);

/** Rounds of the relay's work on a lane's share of the partitions: two inserts, a read, the completion of what it read. */
async function relayRounds(database: PgDatabase, store: PostgresOutboxStore, rounds: number): Promise<void> {
  const { relayId } = await store.leases.join({ name: 'plans', leaseMs: 60_000 });
  const leases = await store.leases.acquire(relayId, P);
  const epochOf = (partition: number) => leases.find((l) => l.partition === partition)?.epoch ?? '0';
  for (let round = 0; round < rounds; round++) {
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
}

/** A pool of `max` connections on a migrated table of its own, and how to drop both. */
async function migrated(max: number): Promise<{ pool: pg.Pool; database: PgDatabase; store: PostgresOutboxStore; schema: string; drop: () => Promise<void> }> {
  const schema = uniqueName('plans');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max });
  const database = fromPgPool(pool);
  const store = new PostgresOutboxStore(database, { schema });
  await store.migrate();
  const drop = async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  };
  return { pool, database, store, schema, drop };
}

/** A pool of one connection on a migrated table of its own with a 100k-row backlog the planner knows about. */
async function backlogged(): Promise<{ pool: pg.Pool; database: PgDatabase; store: PostgresOutboxStore; schema: string; drop: () => Promise<void> }> {
  const table = await migrated(1);
  // on a near-empty table every plan is cheap, and the generic one wins anyway
  await table.pool.query(`INSERT INTO "${table.schema}".outbox (topic, type, key, payload)
    SELECT 'a.b', 'test.event', 'k-' || (g % 1000), json_build_object('n', g) FROM generate_series(1, 100000) g`);
  await table.pool.query(`ANALYZE "${table.schema}".outbox`);
  return table;
}

/** The generic plan of `sql` as PostgreSQL would run it from the plan cache, with `args` as literals; run too with `analyze`. */
async function genericPlan(pool: pg.Pool, sql: string, args: readonly unknown[], analyze = false): Promise<PlanNode> {
  const client = await pool.connect();
  try {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE explained AS ${sql}`);
    const literal = (value: unknown): string =>
      value === null || value === undefined
        ? 'NULL'
        : Array.isArray(value)
          ? client.escapeLiteral(`{${value.map((v) => (v === null ? 'NULL' : `"${String(v)}"`)).join(',')}}`)
          : client.escapeLiteral(String(value));
    const explained = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (${analyze ? 'ANALYZE, ' : ''}VERBOSE, FORMAT JSON) EXECUTE explained(${args.map(literal).join(', ')})`,
    );
    return explained.rows[0]!['QUERY PLAN'][0].Plan;
  } finally {
    await client.query('DEALLOCATE explained; RESET plan_cache_mode');
    client.release();
  }
}

/** The read's generic plan over partitions 0 to `count - 1`, each taking `take` rows, from the start of each; run too with `analyze`. */
function readPlan(pool: pg.Pool, schema: string, count: number, take: number, analyze = false): Promise<PlanNode> {
  const partitions = Array.from({ length: count }, (_, i) => i);
  const none = partitions.map(() => null);
  const args = readPartitions.params(
    partitions,
    none,
    none,
    none,
    none,
    partitions.map(() => take),
    undefined,
  );
  return genericPlan(pool, readPartitions.sql(readerTables({ schema, table: 'outbox' }), P), args, analyze);
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
    const { pool, database, store, drop } = await backlogged();
    cleanup = drop;
    await relayRounds(database, store, 10);
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

  it('on PGlite too, the direct completion leaves lock_timeout as it found it', async () => {
    const db = new PGlite();
    cleanup = () => db.close();
    const database = fromPglite(db);
    const store = new PostgresOutboxStore(database);
    await store.migrate();
    await relayRounds(database, store, 3);
    expect((await db.query<{ lock_timeout: string }>('SHOW lock_timeout')).rows).toEqual([{ lock_timeout: '0' }]);
  });

  it("the read's generic plan sorts nothing: each branch's order and limits come from the partition index", async () => {
    const { pool, schema, drop } = await backlogged();
    cleanup = drop;
    const plan = await readPlan(pool, schema, 22, 23);
    const nodes = [plan, ...descendants(plan)];
    expect(nodes.filter((n) => n['Node Type'] === 'Sort')).toEqual([]);
    expect(nodes.filter((n) => n['Node Type'] === 'Limit').length).toBeGreaterThanOrEqual(6);
  });

  it('a read without recheck ranges or scheduled rows starts only the fresh branch per partition: the other two never start', async () => {
    const { pool, schema, drop } = await backlogged();
    cleanup = drop;
    const plan = await readPlan(pool, schema, P, 4, true);
    // each branch is Limit -> Limit -> Index Scan; a branch's laterals started per partition show as loops of its outer Limit
    const limits = [plan, ...descendants(plan)].filter((n) => n['Node Type'] === 'Limit' && n.Plans?.[0]?.['Node Type'] === 'Limit');
    const scanOf = (limit: PlanNode) => descendants(limit).find((n) => n['Index Name'] !== undefined);
    const loopsBy = (match: (scan: PlanNode) => boolean) => limits.filter((l) => match(scanOf(l) ?? l)).map((l) => l['Actual Loops']);
    // the recheck branch is the one bounded by the range's end, in its index condition or its filter
    const bounded = (scan: PlanNode) => /\brto\b/.test(`${scan['Index Cond'] ?? ''} ${scan.Filter ?? ''}`);
    expect(loopsBy((scan) => scan['Index Name'] === 'outbox_p64_idx' && !bounded(scan))).toEqual([P]);
    expect(loopsBy(bounded)).toEqual([0]);
    expect(loopsBy((scan) => scan['Index Name'] === 'outbox_p64_due_idx')).toEqual([0]);
  });

  it('the direct completion sets its lock_timeout before it asks for any row lock, in the generic plan', async () => {
    const { pool, schema, drop } = await backlogged();
    cleanup = drop;
    const plan = await genericPlan(
      pool,
      completePublishedDirectDeleting.sql(readerTables({ schema, table: 'outbox' }), P),
      completePublishedDirectDeleting.params('00000000-0000-4000-8000-000000000000', [0], ['1'], [0], ['1'], ['00000000-0000-4000-8000-000000000001']),
    );
    const nodes = [plan, ...descendants(plan)];
    // the partition rows' FOR SHARE is the statement's first row lock; the writes all join the rows it returns
    const lockRows = nodes.filter((n) => n['Node Type'] === 'LockRows');
    expect(lockRows).toHaveLength(1);
    const initPlans = (lockRows[0]!.Plans ?? []).filter((n) => n['Subplan Name']?.startsWith('InitPlan') === true);
    const guard = initPlans.find((n) => n.Output?.some((o) => o.startsWith("set_config('lock_timeout'")) === true);
    const param = /returns (\$\d+)/.exec(guard?.['Subplan Name'] ?? '')?.[1];
    expect(param).toBeDefined();
    // evaluated once, as a one-time filter below the lock, before the first partition row reaches it
    const filtered = descendants(lockRows[0]!).filter((n) => n['Subplan Name'] === undefined && n['One-Time Filter']?.includes(`${param} IS NOT NULL`));
    expect(filtered).toHaveLength(1);
  });

  it("on a table as small as a relay keeps it, the completions' generic plans probe the partition index on both its columns", async () => {
    // the plan PostgreSQL caches at a statement's sixth execution is made for the table's size then: on a small table a
    // probe by seq alone through the partition index (a scan of all of it per row) cost no more than a real probe
    const { pool, schema, drop } = await migrated(1);
    cleanup = drop;
    await pool.query(`INSERT INTO "${schema}".outbox (topic, type, key, payload)
      SELECT 'a.b', 'test.event', 'k-' || g, '{}' FROM generate_series(1, 20) g`);
    const tables = readerTables({ schema, table: 'outbox' });
    const relay = '00000000-0000-4000-8000-000000000000';
    const id = '00000000-0000-4000-8000-000000000001';
    const plans = [
      await genericPlan(pool, completePublishedDirectDeleting.sql(tables, P), completePublishedDirectDeleting.params(relay, [0], ['1'], [0], ['1'], [id])),
      await genericPlan(pool, completePublishedDeleting.sql(tables, P), completePublishedDeleting.params(relay, [0], ['1'], [0], ['1'], [id])),
      await genericPlan(pool, completeDeleting.sql(tables, P), completeDeleting.params(relay, [0], ['1'], [0], [id], ['published'], [0], [null], ['1'])),
    ];
    for (const plan of plans) {
      // every probe by seq is a probe: through the partition index only with the partition beside the seq
      const bySeq = [plan, ...descendants(plan)].filter((n) => /\bseq = m(_\d+)?\.seq\b/.test(`${n['Index Cond'] ?? ''} ${n.Filter ?? ''}`));
      expect(bySeq.length).toBeGreaterThan(0);
      expect(bySeq.map((n) => [n['Index Name'], n['Index Cond']])).toEqual(
        bySeq.map((n) =>
          n['Index Name'] === 'outbox_p64_idx'
            ? ['outbox_p64_idx', expect.stringMatching(/^\(+hashtextextended\(.* AND \(o(_\d+)?\.seq = m(_\d+)?\.seq\)\)$/)]
            : [expect.any(String), expect.stringMatching(/seq = m(_\d+)?\.seq/)],
        ),
      );
    }
  });

  it('a completion that names a partition count the table does not have applies nothing', async () => {
    const { database, store, drop } = await migrated(2);
    cleanup = drop;
    const { relayId } = await store.leases.join({ name: 'counts', leaseMs: 60_000 });
    const leases = await store.leases.acquire(relayId, P);
    await database.transaction((tx) =>
      store.insert(
        tx,
        Array.from({ length: 8 }, (_, i) => msg('a.b', `k${i}`)),
      ),
    );
    const read = await store.reader.read(
      relayId,
      P,
      leases.map((l) => ({ partition: l.partition, epoch: l.epoch, after: null, recheck: null, limit: 10 })),
    );
    const row = read.messages.find((m) => m.partition < P / 2);
    if (row === undefined) throw new Error('setup: a row in the lower half of the partitions');
    const epoch = leases.find((l) => l.partition === row.partition)?.epoch ?? '';
    const completion = { partition: row.partition, epoch, published: [row.id], publishedSeqs: [row.seq], failed: [], held: [] };
    expect(await store.reader.complete(relayId, [completion], { partitionCount: P / 2 })).toEqual([
      { partition: row.partition, epoch, applied: false, changed: 0, skipped: [] },
    ]);
    expect(await store.reader.complete(relayId, [completion], { partitionCount: P })).toEqual([
      { partition: row.partition, epoch, applied: true, changed: 1, skipped: [] },
    ]);
  });
});
