/**
 * Measures what one Prometheus scrape of `outboxer/metrics` costs on a large backlog (docs/metrics.md, "What a
 * scrape costs"): `node --import tsx scripts/metrics-scrape-cost.ts [rows] [dead]` (default 1,000,000 pending and
 * 20,000 dead). It fills a schema of its own on DATABASE_URL (default the local test database), scrapes with
 * `gaugeMaxAgeMs: 0` (every scrape reads the database: the worst case), right after the insert (no statistics,
 * visibility map unset) and again after VACUUM ANALYZE, then drops the schema. No assertion: it prints numbers.
 */
import pg from 'pg';
import { cpus, loadavg } from 'node:os';
import { Outbox } from '../src/core/outbox.js';
import { OutboxerMetrics } from '../src/ops/metrics/index.js';
import { createConsolePublisher } from '../src/brokers/console/index.js';
import { fromPgPool, type SqlExecutor } from '../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../src/stores/postgres/postgres-store.js';

const pendingRows = Number(process.argv[2] ?? 1_000_000);
const deadRows = Number(process.argv[3] ?? 20_000);
const scrapes = 200;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', max: 4 });
const schema = `metrics_cost_${Date.now().toString(36)}`;
const table = `"${schema}".outbox`;

function summary(label: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN).toFixed(2);
  return `${label.padEnd(46)} p50 ${at(0.5)} ms  p95 ${at(0.95)} ms  max ${at(1)} ms  (${samples.length} runs)`;
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function measure(phase: string, store: PostgresOutboxStore, metrics: OutboxerMetrics, cached: OutboxerMetrics): Promise<void> {
  for (let i = 0; i < 5; i++) await metrics.metrics(); // prepares the statement on the pool's connections
  const reads: number[] = [];
  const full: number[] = [];
  const fromCache: number[] = [];
  for (let i = 0; i < scrapes; i++) {
    reads.push(await time(() => store.gauges()));
    full.push(await time(() => metrics.metrics()));
    fromCache.push(await time(() => cached.metrics()));
  }
  const counts: number[] = [];
  for (let i = 0; i < 5; i++) counts.push(await time(() => pool.query(`SELECT count(*) FROM ${table} WHERE state = 'pending'`)));
  const gauges = await store.gauges();
  console.log(`\n${phase}: gauges ${JSON.stringify(gauges)}`);
  console.log(summary('for comparison: count(*) of the pending rows', counts));
  console.log(summary('store.gauges() alone', reads));
  console.log(summary('scrape, gaugeMaxAgeMs 0 (gauges + render)', full));
  console.log(summary('scrape, gauges cached (default 5000 ms)', fromCache));
}

try {
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
  await store.migrate();
  const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
  console.log(
    `PostgreSQL ${version}, Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load average ${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}; ${pendingRows} pending, ${deadRows} dead rows`,
  );
  const inserted = await time(async () => {
    await pool.query(
      `INSERT INTO ${table} (topic, type, key, payload) SELECT 'orders.created', 'order.created', 'order-' || (g % 5000), json_build_object('n', g) FROM generate_series(1, $1::int) g`,
      [pendingRows],
    );
    await pool.query(
      `INSERT INTO ${table} (topic, type, payload, state, dead_at, last_error) SELECT 'orders.created', 'order.created', '{}', 'dead', now(), 'refused' FROM generate_series(1, $1::int)`,
      [deadRows],
    );
  });
  console.log(`inserted in ${(inserted / 1000).toFixed(1)} s`);

  const relay = new Outbox<SqlExecutor>(store).createRelay(createConsolePublisher({ write: () => undefined })); // observed, not started: health() from memory
  const metrics = new OutboxerMetrics({ gaugeMaxAgeMs: 0 });
  const cached = new OutboxerMetrics();
  for (const each of [metrics, cached]) {
    each.observeStore(store);
    each.observeRelay(relay);
    const hooks = each.relayHooks();
    for (let i = 0; i < 1000; i++)
      hooks.onPublished?.({ id: String(i), topic: 'orders.created', key: null, attempts: 1, createdAt: new Date(Date.now() - i), destination: 'default' });
  }
  await measure('right after the insert (no ANALYZE yet)', store, metrics, cached);
  await pool.query(`VACUUM ANALYZE ${table}`);
  await measure('after VACUUM ANALYZE', store, metrics, cached);
  console.log(
    `\nload average at the end ${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  );
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}
