/**
 * What the outbox table's engine-v1 leftovers cost a writer (issue 23): `node --import tsx scripts/outbox-insert-cost.ts [rows] [rounds]`.
 * Three tables, each `migrate`d in a schema of its own: with the leftovers that migration 14 dropped put back (the
 * indexes `<t>_pending_key_idx` and `<t>_pending_unkeyed_idx`, the fence triggers, the lease columns and
 * `available_at`, fillfactor 70: the table as schema 13 left it); as built; and that without `<t>_pending_idx` as well
 * (read by the gauges and the operators' pending list only). For each, in turns: `rows` plain-SQL rows in one
 * INSERT ... SELECT, and 2,000 transactions of one outbox.enqueue each (the writer's statement, BEGIN and COMMIT),
 * timed on the client and by the backend's CPU from /proc; the heap's size after the bulk load. Prints numbers, drops
 * the schemas.
 */
import pg from 'pg';
import { Outbox } from '../src/core/outbox.js';
import { fromPgPool, PostgresOutboxStore } from '../src/stores/postgres/index.js';
import { procStat } from '../bench/measure/process-cpu.js';

const rows = Number(process.argv[2] ?? 100_000);
const TRANSACTIONS = 2_000;
const ROUNDS = Number(process.argv[3] ?? 4);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const stamp = Date.now().toString(36);

interface Variant {
  readonly name: string;
  readonly schema: string;
  readonly ddl: (t: string, s: string) => string;
}
/** The leftovers of engine v1 put back, as schema 13 had them (the fence function is recreated for its triggers). */
const v1Leftovers = (t: string, s: string) => `
  ALTER TABLE ${t} ADD COLUMN lease_owner text, ADD COLUMN lease_token uuid, ADD COLUMN lease_until timestamptz,
    ADD COLUMN available_at timestamptz NOT NULL DEFAULT clock_timestamp(), SET (fillfactor = 70);
  CREATE INDEX outbox_pending_key_idx ON ${t} (key, seq) WHERE state = 'pending' AND key IS NOT NULL;
  CREATE INDEX outbox_pending_unkeyed_idx ON ${t} (seq) WHERE state = 'pending' AND key IS NULL;
  CREATE FUNCTION ${s}.outboxer_fence_v1() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN RETURN NEW; END $fn$;
  CREATE TRIGGER outbox_fence_v1_insert BEFORE INSERT ON ${t} FOR EACH ROW
    WHEN (NEW.lease_token IS NOT NULL OR NEW.lease_owner IS NOT NULL OR NEW.lease_until IS NOT NULL
      OR (NEW.available_at > clock_timestamp() AND (NEW.due_at IS NULL OR NEW.due_at < NEW.available_at)))
    EXECUTE FUNCTION ${s}.outboxer_fence_v1();
  CREATE TRIGGER outbox_fence_v1_update BEFORE UPDATE ON ${t} FOR EACH ROW
    WHEN (NEW.lease_token IS DISTINCT FROM OLD.lease_token OR NEW.available_at IS DISTINCT FROM OLD.available_at)
    EXECUTE FUNCTION ${s}.outboxer_fence_v1();`;
const variants: Variant[] = [
  {
    name: 'with the v1 leftovers put back (schema 13: 5 indexes written per keyed insert, fence triggers, fillfactor 70)',
    schema: `insert_cost_a_${stamp}`,
    ddl: v1Leftovers,
  },
  { name: 'as built (schema 14: 4 indexes, no fence triggers, fillfactor 100)', schema: `insert_cost_b_${stamp}`, ddl: () => '' },
  { name: 'and without pending_idx (3 indexes: pkey, id, partition)', schema: `insert_cost_c_${stamp}`, ddl: (_t, s) => `DROP INDEX ${s}.outbox_pending_idx;` },
];

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const results = new Map<string, { bulkUs: number[]; txUs: number[]; txCpuUs: number[]; heapMb: number }>();
  try {
    for (const v of variants) {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      await new PostgresOutboxStore(fromPgPool(pool), { schema: v.schema, table: 'outbox' }).migrate();
      await pool.end();
      const t = `"${v.schema}".outbox`;
      const ddl = v.ddl(t, `"${v.schema}"`);
      if (ddl !== '') await admin.query(ddl);
      results.set(v.name, { bulkUs: [], txUs: [], txCpuUs: [], heapMb: 0 });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
        const t = `"${v.schema}".outbox`;
        const result = results.get(v.name)!;
        await admin.query(`TRUNCATE ${t}`);
        let started = performance.now();
        await admin.query(`INSERT INTO ${t} (topic, type, key, payload)
          SELECT 'bench.evt', 'bench.event', 'k-' || (g % 1000), jsonb_build_object('n', g, 'pad', repeat('x', 176)) FROM generate_series(1, ${rows}) g`);
        result.bulkUs.push(((performance.now() - started) * 1000) / rows);
        result.heapMb = Number((await admin.query<{ b: string }>(`SELECT pg_relation_size('${t}') AS b`)).rows[0]?.b) / 2 ** 20;
        await admin.query(`TRUNCATE ${t}`);
        // the writer's path: one enqueue per transaction through the library, on one connection
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        const db = fromPgPool(pool);
        const outbox = new Outbox(new PostgresOutboxStore(db, { schema: v.schema, table: 'outbox' }));
        const pid = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        for (let i = 0; i < 50; i++)
          await db.transaction((tx) =>
            outbox.enqueue(tx, { topic: 'bench.evt', type: 'bench.event', key: `k-${i % 1000}`, payload: { n: i, pad: 'x'.repeat(176) } }),
          );
        const cpuBefore = procStat(pid)?.cpu ?? Number.NaN;
        started = performance.now();
        for (let i = 0; i < TRANSACTIONS; i++) {
          await db.transaction((tx) =>
            outbox.enqueue(tx, { topic: 'bench.evt', type: 'bench.event', key: `k-${i % 1000}`, payload: { n: i, pad: 'x'.repeat(176) } }),
          );
        }
        result.txUs.push(((performance.now() - started) * 1000) / TRANSACTIONS);
        result.txCpuUs.push(((procStat(pid)?.cpu ?? Number.NaN) - cpuBefore) / TRANSACTIONS);
        await pool.end();
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    console.log(
      `| table | bulk insert µs/row (median of ${ROUNDS}, ${rows} rows) | heap MB | enqueue transaction µs (wall) | backend CPU µs per transaction |`,
    );
    console.log('|---|---|---|---|---|');
    for (const [name, r] of results) {
      console.log(`| ${name} | ${median(r.bulkUs).toFixed(2)} | ${r.heapMb.toFixed(1)} | ${median(r.txUs).toFixed(0)} | ${median(r.txCpuUs).toFixed(0)} |`);
    }
  } finally {
    for (const v of variants) await admin.query(`DROP SCHEMA IF EXISTS "${v.schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
