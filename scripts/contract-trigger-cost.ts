/**
 * What the table contract's trigger costs a writer on PostgreSQL (docs/table.md, "What the table refuses, and the error a SQL producer sees", its cost):
 * `node --import tsx scripts/contract-trigger-cost.ts [rounds]`. Two tables, each `migrate`d in a schema of its own:
 * as built, and the same without the `<t>_contract` trigger. For each, in alternating turns: 20,000 plain-SQL rows in
 * one INSERT ... SELECT (per row), and 2,000 transactions of one row each through the library's insert statement
 * (BEGIN, INSERT, COMMIT; per transaction), each without headers and with a traceparent and a tenant header. Backend
 * CPU from /proc (10 ms ticks), medians over the rounds. Prints numbers, drops the schemas.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Outbox } from '../src/core/outbox.js';
import { fromPgPool, PostgresOutboxStore, type SqlExecutor } from '../src/stores/postgres/index.js';
import { procStat } from '../bench/measure/process-cpu.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const BULK_ROWS = 20_000;
const TRANSACTIONS = 2_000;
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const stamp = Date.now().toString(36);
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

const pool = new pg.Pool({ connectionString: url, max: 1 });
const tables = [
  { name: 'as built', schema: `contract_cost_built_${stamp}` },
  { name: 'without the trigger', schema: `contract_cost_none_${stamp}` },
];
for (const { schema } of tables) await new PostgresOutboxStore(fromPgPool(pool), { schema }).migrate();
const client = await pool.connect();
try {
  await client.query(`DROP TRIGGER outbox_contract ON "${tables[1]!.schema}".outbox`);
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const cpu = () => procStat(pid)?.cpu ?? Number.NaN;
  const runner = {
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    },
  };
  const samples = new Map<string, number[]>();
  const record = (what: string, value: number) => samples.set(what, [...(samples.get(what) ?? []), value]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const { name, schema } of round % 2 === 0 ? tables : [...tables].reverse()) {
      const outbox = new Outbox<SqlExecutor>(new PostgresOutboxStore(fromPgPool(pool), { schema }));
      for (const headers of [false, true]) {
        const label = headers ? 'traceparent and tenant headers' : 'no headers';
        await client.query(`TRUNCATE "${schema}".outbox`);
        const headerSql = headers ? `jsonb_build_object('traceparent', '${TRACEPARENT}', 'tenant', 't-' || (g % 7))` : `'{}'::jsonb`;
        let before = cpu();
        await client.query(`INSERT INTO "${schema}".outbox (topic, type, key, payload, headers)
          SELECT 'orders.created', 'order.created', 'k-' || (g % 1000), json_build_object('n', g), ${headerSql} FROM generate_series(1, ${BULK_ROWS}) g`);
        record(`${name} | INSERT ... SELECT, µs per row | ${label}`, (cpu() - before) / BULK_ROWS);
        before = cpu();
        for (let n = 0; n < TRANSACTIONS; n++) {
          await outbox.transaction(runner, (tx) =>
            outbox.enqueue(tx, {
              topic: 'orders.created',
              type: 'order.created',
              key: `k-${n % 1000}`,
              payload: { n, id: randomUUID() },
              ...(headers ? { headers: { traceparent: TRACEPARENT, tenant: `t-${n % 7}` } } : {}),
            }),
          );
        }
        record(`${name} | one-row transaction, µs per transaction | ${label}`, (cpu() - before) / TRANSACTIONS);
      }
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  console.log(`backend CPU, median of ${ROUNDS} rounds (table | what | headers: median [rounds])`);
  for (const [what, values] of samples) console.log(`${what}: ${median(values).toFixed(1)} [${values.map((v) => v.toFixed(1)).join(' ')}]`);
} finally {
  for (const { schema } of tables) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  client.release();
  await pool.end();
}
