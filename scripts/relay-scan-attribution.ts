/**
 * Where a drain's scans of the outbox table and its side tables come from (issue 23):
 * `node --import tsx scripts/relay-scan-attribution.ts [rows] [out.md]` (default 100,000 rows; RabbitMQ as in the bench).
 *
 * 1. A fresh schema (`migrate`, so engine v2), `rows` plain-SQL rows over 1,000 keys (the bench's workload), then
 *    `outbox.createRelay` with the library's defaults drains them to RabbitMQ. pg_stat_user_tables and
 *    pg_stat_user_indexes of the schema are read before and after (the relay's pool ended, so its backends flushed
 *    their counters; nothing else touches the schema meanwhile: the end is seen on the broker, not by counting rows).
 *    Every statement the relay sends is counted at the driver, by kind, with the sizes of its array parameters.
 * 2. The same rows again, and each statement kind alone on one connection inside BEGIN ... ROLLBACK, repeated (the
 *    prepared statement goes generic after five runs, as the relay's do): scans per execution from
 *    pg_stat_get_xact_numscans of every table and index of the schema. Counts x per-execution scans predict the
 *    drain's totals, printed beside the measured ones.
 * 3. EXPLAIN (ANALYZE, BUFFERS) of the read and of the completion, custom and generic plans, into the output file.
 * No assertion: it prints numbers, then drops the schema (KEEP_SCHEMA=1 keeps it, loaded, for a look by hand).
 */
import pg from 'pg';
import { Outbox } from '../src/core/outbox.js';
import { fromPgPool, PostgresOutboxStore } from '../src/stores/postgres/index.js';
import { createBrokerTarget } from '../bench/support/broker-target.js';
import { MESSAGE_TYPE, payloadSql } from '../bench/support/workload.js';
import { countStatements } from './scan-attribution/count-statements.js';
import { cumulativeCounters } from './scan-attribution/scan-counters.js';
import { scansPerExecution } from './scan-attribution/scans-per-execution.js';
import { ScanReport } from './scan-attribution/scan-report.js';
import { statementVariants } from './scan-attribution/statement-variants.js';
import { timeVariants } from './scan-attribution/time-variants.js';

const rows = Number(process.argv[2] ?? 100_000);
const outFile = process.argv[3] ?? '/tmp/relay-scan-attribution.md';
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `scan_attr_${Date.now().toString(36)}`;
const table = `"${schema}".outbox`;
const RELAY_APP = 'scan-attribution-relay';
const report = new ScanReport();
const sent = countStatements(RELAY_APP);

async function load(admin: pg.Client): Promise<void> {
  await admin.query(`INSERT INTO ${table} (topic, type, key, payload)
    SELECT '${topic}', '${MESSAGE_TYPE}', 'k-' || (g % 1000), ${payloadSql('g', { topic, keys: 1000, payloadBytes: 200 })}
    FROM generate_series(0, ${rows - 1}) g`);
  await admin.query(`ANALYZE ${table}`);
}

let topic = '';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: url, application_name: 'scan-attribution-admin' });
  await admin.connect();
  const target = await createBrokerTarget('rabbitmq');
  topic = target.topic;
  const pool = new pg.Pool({ connectionString: url, max: 8, application_name: RELAY_APP });
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema, table: 'outbox' });
  try {
    await store.migrate();
    const indexes = await admin.query<{ indexname: string; indexdef: string }>(
      'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname',
      [schema, 'outbox'],
    );
    const triggers = await admin.query<{ tgname: string; def: string }>(
      `SELECT tgname, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY tgname`,
      [table],
    );
    await load(admin);
    await sleep(1200);
    await admin.query('SELECT 1');
    const before = await cumulativeCounters(admin, schema);

    // 1. the drain
    const outbox = new Outbox(store);
    const relay = outbox.createRelay(target.publisher());
    sent.clear(); // the migration's statements went through the same pool
    const started = performance.now();
    relay.start();
    while ((await target.stored()) < rows) await sleep(50);
    const drainSeconds = (performance.now() - started) / 1000;
    await sleep(500);
    await relay.stop();
    await pool.end();
    await sleep(1500);
    const after = await cumulativeCounters(admin, schema);
    const left = (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n;
    report.drain(rows, drainSeconds, left);
    report.counterDeltas(before, after, rows);
    const kinds = [...sent.entries()].sort((a, b) => b[1].count - a[1].count);
    report.statements(kinds);

    // 2. each statement alone, as the relay runs it (named, prepared: generic from the 6th run if cheaper), on a
    // table without the drain's dead tuples (autovacuum may be off, and other sessions may hold the horizon back)
    await admin.query(`TRUNCATE ${table}`);
    await load(admin);
    const solo = new pg.Pool({ connectionString: url, max: 1, application_name: 'scan-attribution-solo' });
    const soloStore = new PostgresOutboxStore(fromPgPool(solo), { schema, table: 'outbox' });
    const measured = await scansPerExecution(solo, soloStore, schema, kinds);
    const { readRows } = measured;
    report.perExecution(measured.perExecution, readRows, measured.prepared);

    // 3. variants of the read and the completion, and the ideal relay's statements on the same rows: plans, time, WAL
    const { variants, completeRows } = statementVariants(measured, (line) => report.say(line));
    const { timings, plans } = await timeVariants(solo, schema, variants);
    report.variants(timings, readRows, completeRows);
    await soloStore.leases.leave(measured.relayId);
    await solo.end();

    report.table(schema, indexes.rows, triggers.rows);
    report.write(outFile, plans);
  } finally {
    if (process.env.KEEP_SCHEMA === '1') console.log(`schema ${schema} kept (KEEP_SCHEMA=1)`);
    else await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
    await target.cleanup().catch(() => undefined);
    await pool.end().catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
