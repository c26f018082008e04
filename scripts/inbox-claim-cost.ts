/**
 * What the inbox's claim costs PostgreSQL per message (issue 23): `node --import tsx scripts/inbox-claim-cost.ts [transactions]`.
 * In a schema of its own, `transactions` transactions (16 at once, on a pool of 10) of three kinds, in ABBA order over
 * two rounds: a minimal handler's (BEGIN, one INSERT of an effects row, COMMIT); the same with the inbox's claim
 * first, through a store with prepared statements (the default); and through one without (`preparedStatements:
 * false`, as behind PgBouncer in transaction mode). Prints the rate and PostgreSQL's CPU per transaction (every
 * server process, from /proc), then drops the schema.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PostgresCpuMeter } from '../bench/measure/process-cpu.js';
import { fromPgPool } from '../src/stores/postgres/database.js';
import { PostgresInboxStore } from '../src/stores/postgres/inbox/index.js';

const transactions = Number(process.argv[2] ?? 4_000);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `inbox_claim_cost_${Date.now().toString(36)}`;
const payload = JSON.stringify({ n: 1, text: 'x'.repeat(100) });

const admin = new pg.Client({ connectionString: url });
await admin.connect();
const pool = new pg.Pool({ connectionString: url, max: 10 });
try {
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.effects (message_id uuid PRIMARY KEY, payload jsonb)`);
  const prepared = new PostgresInboxStore(fromPgPool(pool), { schema });
  const unnamed = new PostgresInboxStore(fromPgPool(pool), { schema, preparedStatements: false });
  await prepared.migrate();
  const kinds: Record<string, PostgresInboxStore | undefined> = { minimal: undefined, 'claim, prepared': prepared, 'claim, unnamed': unnamed };
  const names = Object.keys(kinds);
  for (const name of [...names, ...names.reverse()]) await run(name, kinds[name]);
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool.end();
  await admin.end();
}

async function run(name: string, store: PostgresInboxStore | undefined): Promise<void> {
  const meter = await PostgresCpuMeter.open(admin);
  meter?.start();
  const started = performance.now();
  let begun = 0;
  const worker = async () => {
    while (begun++ < transactions) {
      const id = randomUUID();
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        if (store !== undefined) await store.claim(client, { consumer: 'cost', id, type: 'OrderCreated', topic: 'orders', key: 'k' });
        await client.query(`INSERT INTO ${schema}.effects (message_id, payload) VALUES ($1, $2)`, [id, payload]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const seconds = (performance.now() - started) / 1000;
  const cpu = await meter?.stop(process.pid);
  const perTransaction = cpu === undefined ? 'n/a' : `${(cpu.total / transactions).toFixed(1)} us`;
  console.log(`${name.padEnd(16)} ${Math.round(transactions / seconds)} tx/s, PostgreSQL CPU per transaction ${perTransaction}`);
}
