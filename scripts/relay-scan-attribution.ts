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
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { Outbox } from '../src/core/outbox.js';
import { fromPgPool, PostgresOutboxStore, type SqlExecutor } from '../src/stores/postgres/index.js';
import { completeDeleting, completePublishedDeleting } from '../src/stores/postgres/reader/complete-partitions.js';
import { readPartitions } from '../src/stores/postgres/reader/read-partitions.js';
import { readerTables } from '../src/stores/postgres/reader/reader-tables.js';
import { createBrokerTarget } from '../bench/support/broker-target.js';
import { MESSAGE_TYPE, payloadSql } from '../bench/support/workload.js';

const rows = Number(process.argv[2] ?? 100_000);
const outFile = process.argv[3] ?? '/tmp/relay-scan-attribution.md';
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `scan_attr_${Date.now().toString(36)}`;
const table = `"${schema}".outbox`;
const RELAY_APP = 'scan-attribution-relay';
const out: string[] = [];
const say = (line = '') => {
  console.log(line);
  out.push(line);
};

// --- statements the relay sends, counted at the driver -------------------------------------------------------------
interface Sent {
  count: number;
  text: string;
  arrays: number[];
  samples: unknown[][];
}
const sent = new Map<string, Sent>();
function kindOf(text: string): string {
  if (text.includes('WITH snap AS MATERIALIZED')) return 'read';
  if (text.includes('WITH locked AS MATERIALIZED')) return text.includes('AS m(partition, seq, id)') ? 'complete (published, by seq)' : 'complete';
  return text
    .replace(/\s+/g, ' ')
    .replace(/"scan_attr_[a-z0-9]+"\./g, '')
    .trim()
    .slice(0, 90);
}
const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const original = proto.query;
proto.query = function counting(this: { connectionParameters?: { application_name?: string } }, ...args: unknown[]) {
  if (this.connectionParameters?.application_name === RELAY_APP) {
    const first = args[0] as string | { text: string; values?: unknown[] };
    const text = typeof first === 'string' ? first : first.text;
    const values = (typeof first === 'string' ? args[1] : first.values) as unknown[] | undefined;
    const kind = kindOf(text);
    const entry = sent.get(kind) ?? { count: 0, text, arrays: [], samples: [] };
    entry.count++;
    const firstArray = values?.find(Array.isArray) as unknown[] | undefined;
    const longest = Math.max(0, ...(values ?? []).filter(Array.isArray).map((a) => (a as unknown[]).length));
    entry.arrays.push(kind === 'read' ? (firstArray?.length ?? 0) : longest);
    if (entry.samples.length < 50 && values !== undefined) entry.samples.push(values);
    sent.set(kind, entry);
  }
  return original.apply(this, args);
};

// --- counters ------------------------------------------------------------------------------------------------------
type Counters = Map<string, number>;
async function cumulative(client: pg.Client): Promise<Counters> {
  await client.query('SELECT pg_stat_clear_snapshot()');
  const counters: Counters = new Map();
  const t = await client.query<{
    relname: string;
    seq_scan: string;
    seq_tup_read: string;
    idx_scan: string | null;
    n_tup_ins: string;
    n_tup_upd: string;
    n_tup_hot_upd: string;
    n_tup_del: string;
  }>('SELECT relname, seq_scan, seq_tup_read, idx_scan, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables WHERE schemaname = $1', [
    schema,
  ]);
  for (const r of t.rows) {
    counters.set(`${r.relname} seq_scan`, Number(r.seq_scan));
    counters.set(`${r.relname} seq_tup_read`, Number(r.seq_tup_read));
    counters.set(`${r.relname} idx_scan (all its indexes)`, Number(r.idx_scan ?? 0));
    counters.set(`${r.relname} n_tup_del`, Number(r.n_tup_del));
    counters.set(`${r.relname} n_tup_upd`, Number(r.n_tup_upd));
  }
  const i = await client.query<{ indexrelname: string; idx_scan: string; idx_tup_read: string }>(
    'SELECT indexrelname, idx_scan, idx_tup_read FROM pg_stat_user_indexes WHERE schemaname = $1',
    [schema],
  );
  for (const r of i.rows) {
    counters.set(`index ${r.indexrelname} idx_scan`, Number(r.idx_scan));
    counters.set(`index ${r.indexrelname} idx_tup_read`, Number(r.idx_tup_read));
  }
  return counters;
}

/** Scans in the current transaction of this backend, per table (seq) and per index. */
async function inTransaction(client: SqlExecutor): Promise<Counters> {
  const result = await client.query(
    `SELECT c.relname, c.relkind, pg_stat_get_xact_numscans(c.oid)::int AS scans, pg_stat_get_xact_tuples_returned(c.oid)::int AS returned
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')`,
    [schema],
  );
  const counters: Counters = new Map();
  for (const r of result.rows as { relname: string; relkind: string; scans: number; returned: number }[]) {
    if (r.scans > 0) counters.set(r.relkind === 'r' ? `${r.relname} seq_scan` : `index ${r.relname} idx_scan`, r.scans);
  }
  return counters;
}

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
    const before = await cumulative(admin);

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
    const after = await cumulative(admin);
    const left = (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n;
    say(`# Scan attribution: ${rows.toLocaleString('en-US')} rows drained by outbox.createRelay (library defaults) to RabbitMQ`);
    say(`drain ${drainSeconds.toFixed(1)} s (${Math.round(rows / drainSeconds)} msg/s), rows left ${left}`);
    say();
    say('## Counter deltas over the drain (pg_stat_user_tables / _indexes)');
    say('| counter | delta | per message |');
    say('|---|---|---|');
    const delta: Counters = new Map();
    for (const [name, value] of after) {
      const d = value - (before.get(name) ?? 0);
      delta.set(name, d);
      if (d !== 0 || name.includes('idx_scan')) say(`| ${name} | ${d} | ${(d / rows).toFixed(3)} |`);
    }
    say();
    say('## Statements the relay sent (at the driver)');
    say('| statement | count | array sizes (read: partitions; others: longest array) min / mean / max |');
    say('|---|---|---|');
    const kinds = [...sent.entries()].sort((a, b) => b[1].count - a[1].count);
    for (const [kind, entry] of kinds) {
      const sizes = entry.arrays;
      const mean = sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
      say(`| ${kind.replaceAll('|', '/')} | ${entry.count} | ${Math.min(...sizes)} / ${mean.toFixed(1)} / ${Math.max(...sizes)} |`);
    }

    // 2. each statement alone, as the relay runs it (named, prepared: generic from the 6th run if cheaper), on a
    // table without the drain's dead tuples (autovacuum may be off, and other sessions may hold the horizon back)
    await admin.query(`TRUNCATE ${table}`);
    await load(admin);
    const solo = new pg.Pool({ connectionString: url, max: 1, application_name: 'scan-attribution-solo' });
    const soloStore = new PostgresOutboxStore(fromPgPool(solo), { schema, table: 'outbox' });
    const joined = await soloStore.leases.join({ name: 'scan-attribution', leaseMs: 600_000 });
    const leases = await soloStore.leases.acquire(joined.relayId, 64);
    const partitionCount = joined.config.partitionCount;
    const perExecution = new Map<string, Counters[]>();
    /** Runs `work` inside BEGIN ... ROLLBACK on `executor` (one connection) and returns the scans it made. */
    const scansOf = async (executor: SqlExecutor, work: () => Promise<unknown>): Promise<Counters> => {
      await executor.query('BEGIN');
      try {
        const before = await inTransaction(executor);
        await work();
        const after = await inTransaction(executor);
        const d: Counters = new Map();
        for (const [name, value] of after) if (value - (before.get(name) ?? 0) !== 0) d.set(name, value - (before.get(name) ?? 0));
        return d;
      } finally {
        await executor.query('ROLLBACK');
      }
    };
    const once = async (label: string, work: () => Promise<unknown>) => {
      perExecution.set(label, [...(perExecution.get(label) ?? []), await scansOf(solo, work)]);
    };
    // a read of a backlog as the relay sends it: a lane's share of the partitions (backlogged, 500 rows split
    // among them) while the other partitions ride along at 16 rows each
    const lane = leases.slice(0, Math.ceil(leases.length / 3));
    const requests = leases.map((l, i) => ({
      partition: l.partition,
      epoch: l.epoch,
      after: null,
      recheck: null,
      limit: i < lane.length ? Math.ceil(500 / lane.length) : 16,
    }));
    let batch: { partition: number; epoch: string; ids: string[]; seqs: string[] }[] = [];
    let readRows = 0;
    for (let i = 0; i < 8; i++) {
      await once('read (64 partitions, 22 backlogged)', async () => {
        const read = await soloStore.reader.read(joined.relayId, partitionCount, requests);
        readRows = read.messages.length;
        if (i === 0) {
          const byPartition = new Map<number, { ids: string[]; seqs: string[] }>();
          for (const m of read.messages) {
            if (!lane.some((l) => l.partition === m.partition)) continue;
            const entry = byPartition.get(m.partition) ?? { ids: [], seqs: [] };
            entry.ids.push(m.id);
            entry.seqs.push(m.seq);
            byPartition.set(m.partition, entry);
          }
          batch = lane.map((l) => ({
            partition: l.partition,
            epoch: l.epoch,
            ids: byPartition.get(l.partition)?.ids ?? [],
            seqs: byPartition.get(l.partition)?.seqs ?? [],
          }));
        }
      });
    }
    const completed = batch.reduce((n, b) => n + b.ids.length, 0);
    // as the relay completes a batch (the seqs the read returned), and as it writes an unwritten outcome again (ids only)
    for (const [how, seqs] of [
      ['by seq', true],
      ['by id', false],
    ] as const) {
      for (let i = 0; i < 8; i++) {
        await once(`complete ${how} (${batch.length} partitions, ${completed} published)`, () =>
          soloStore.reader.complete(
            joined.relayId,
            batch.map((b) => ({ partition: b.partition, epoch: b.epoch, published: b.ids, ...(seqs ? { publishedSeqs: b.seqs } : {}), failed: [], held: [] })),
          ),
        );
      }
    }
    const prepared = (
      await solo.query(
        `SELECT left(regexp_replace(statement, '\\s+', ' ', 'g'), 60) AS statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'outboxer_%'`,
      )
    ).rows as { statement: string; generic_plans: string; custom_plans: string }[];
    // every other statement kind the relay sent, replayed with its first captured parameters
    const client = await solo.connect();
    try {
      for (const [kind, entry] of kinds) {
        if (kind === 'read' || kind.startsWith('complete') || /^(BEGIN|COMMIT|ROLLBACK|LISTEN|SET|RESET|SELECT 1)/.test(kind)) continue;
        try {
          perExecution.set(kind, [await scansOf(client, () => client.query(entry.text, entry.samples[0] ?? []))]);
        } catch (error) {
          perExecution.set(kind, [new Map([[`error: ${(error as Error).message.slice(0, 60)}`, 1]])]);
        }
      }
    } finally {
      client.release();
    }
    say();
    say(
      `## Scans per execution, each statement alone (BEGIN ... ROLLBACK; runs 1..n as the relay runs it: prepared, generic from run 6 if cheaper; the read returned ${readRows} rows)`,
    );
    for (const [label, runs] of perExecution) {
      const names = [...new Set(runs.flatMap((r) => [...r.keys()]))].sort();
      say(`- **${label}**: ${names.map((name) => `${name} ${runs.map((r) => r.get(name) ?? 0).join('/')}`).join('; ') || 'no scan'}`);
    }
    say(
      `- plans the connection's prepared statements used after 8 runs: ${prepared.map((r) => `"${r.statement.trim()}…" generic ${r.generic_plans}, custom ${r.custom_plans}`).join('; ')}`,
    );

    // 3. variants of the read and the completion, and the ideal relay's statements on the same rows: plans, time, WAL
    const tables = readerTables({ schema, table: 'outbox' });
    const replace = (text: string, from: string, to: string, all = false) => {
      if (!text.includes(from)) throw new Error(`variant: ${JSON.stringify(from.slice(0, 60))} not found in the statement (src changed?)`);
      return all ? text.replaceAll(from, to) : text.replace(from, to);
    };
    const readSql = readPartitions.sql(tables, partitionCount);
    // proposals on the read, built by editing its text: left out, with the reason, once the read no longer has that text
    const edited = (label: string, build: () => string): [string, string][] => {
      try {
        return [[label, build()]];
      } catch (error) {
        say(`- variant "${label}" left out: ${(error as Error).message}`);
        return [];
      }
    };
    // the hold probe and the due branch are gated in the read itself (a scheduled row in the table, in the partition)
    const readEdits = [...edited('read, no ORDER BY (the relay sorts)', () => replace(readSql, '\n    ORDER BY f.partition, f.seq', ''))];
    // the fresh branch alone, one LATERAL index scan per partition: the least a partitioned read can cost
    const freshOnly = `SELECT r.partition, o.* FROM unnest($1::int[], $2::int[]) AS r(partition, lim) CROSS JOIN LATERAL (
      SELECT o.seq, o.id, o.topic, o.type, o.key, o.payload::text AS payload_json, o.payload_bytes, o.content_type, o.headers, o.created_at,
        o.attempts + 1 AS attempts, o.last_error, o.destination
      FROM ${tables.outbox} o WHERE ${tables.partitionOf('o', partitionCount)} = r.partition AND o.state = 'pending' AND o.seq > 0 AND o.due_at IS NULL
      ORDER BY o.seq LIMIT r.lim) o`;
    const limits = [16, Math.ceil(500 / lane.length), 1];
    // untyped: a trailing argument (paused destinations) may or may not exist at this commit; [] means none
    const readParams = (readPartitions.params as (...args: unknown[]) => unknown[])(
      requests.map((r) => r.partition),
      requests.map(() => null),
      requests.map(() => null),
      requests.map(() => null),
      requests.map(() => null),
      requests.map((r) => (r.limit === 16 ? 0 : 1)),
      limits,
      [],
    );
    // as the ideal relay reads (no state filter: its table holds pending rows only; seq not cast, or ORDER BY would sort the text)
    const floorRead = `SELECT seq, id, topic, type, key, payload::text AS payload, headers, created_at FROM ${tables.outbox} WHERE seq > $1::int8 ORDER BY seq LIMIT ${readRows}`;

    const rowsOf = batch.flatMap((b) => b.ids.map((id, i) => ({ partition: b.partition, id, seq: b.seqs[i] as string })));
    const fence = [joined.relayId, batch.map((b) => b.partition), batch.map((b) => b.epoch), rowsOf.map((r) => r.partition)] as const;
    const publishedSql = completePublishedDeleting.sql(tables, 0);
    const publishedParams = completePublishedDeleting.params(
      ...fence,
      rowsOf.map((r) => r.seq),
      rowsOf.map((r) => r.id),
    );
    const outcomesSql = completeDeleting.sql(tables, 0);
    const outcomesParams = (bySeq: boolean) =>
      completeDeleting.params(
        ...fence,
        rowsOf.map((r) => r.id),
        rowsOf.map(() => 'published' as const),
        rowsOf.map(() => 0),
        rowsOf.map(() => null),
        rowsOf.map((r) => (bySeq ? r.seq : null)),
      );
    const floorDelete = `DELETE FROM ${tables.outbox} WHERE seq = ANY($1::int8[])`;
    // the floor of a fenced completion: the same partition lock, then one DELETE by seq with no row lock, so a row
    // another session locks would be waited for (what the statements as built must not do)
    const lockedSql = publishedSql.slice(publishedSql.indexOf('WITH locked AS MATERIALIZED ('), publishedSql.indexOf('), sent AS'));
    const leanPublished = `${lockedSql}), published AS (
      DELETE FROM ${tables.outbox} o USING unnest($4::int[], $5::int8[]) AS m(partition, seq) JOIN locked l ON l.partition = m.partition
      WHERE o.seq = m.seq AND o.state = 'pending'
      RETURNING m.partition)
    SELECT r.partition, l.partition IS NOT NULL AS applied, (SELECT count(*) FROM published p WHERE p.partition = r.partition)::int AS published
    FROM unnest($2::int[], $3::int8[]) AS r(partition, epoch) LEFT JOIN locked l ON l.partition = r.partition`;
    const variants: [string, string, unknown[]][] = [
      ['read, as built', readSql, readParams],
      ...readEdits.map(([label, sql]): [string, string, unknown[]] => [label, sql, readParams]),
      ['read: the fresh branch alone (LATERAL per partition)', freshOnly, [requests.map((r) => r.partition), requests.map((r) => r.limit)]],
      [`ideal read: seq > $1 ORDER BY seq LIMIT ${readRows}`, floorRead, ['0']],
      ['complete, as built: published rows by seq (what the relay sends)', publishedSql, publishedParams],
      ['complete, as built: any outcome, published rows by seq', outcomesSql, outcomesParams(true)],
      ['complete, as built: any outcome by id (an unwritten outcome again)', outcomesSql, outcomesParams(false)],
      ['complete floor: partition lock + one DELETE by seq, no row lock', leanPublished, [...fence, rowsOf.map((r) => r.seq)]],
      [`ideal delete: seq = ANY($1) (${rowsOf.length} rows)`, floorDelete, [rowsOf.map((r) => r.seq)]],
    ];
    const literal = (value: unknown): string => {
      if (value === null) return 'NULL';
      if (Array.isArray(value))
        return pg.Client.prototype.escapeLiteral(`{${value.map((v) => (v === null ? 'NULL' : `"${String(v).replace(/(["\\])/g, '\\$1')}"`)).join(',')}}`);
      return pg.Client.prototype.escapeLiteral(String(value));
    };
    const plans: string[] = [];
    const timings = new Map<string, { ms: number[]; planMs: number[]; wal: number; scans: Counters }>();
    const pc = await solo.connect();
    try {
      for (let v = 0; v < variants.length; v++) await pc.query(`PREPARE v${v} AS ${(variants[v] as [string, string, unknown[]])[1]}`);
      for (let round = 0; round < 12; round++) {
        for (const mode of round % 2 === 0 ? ['force_custom_plan', 'force_generic_plan'] : ['force_generic_plan', 'force_custom_plan']) {
          await pc.query(`SET plan_cache_mode = ${mode}`);
          for (let v = 0; v < variants.length; v++) {
            const [label, , params] = variants[v] as [string, string, unknown[]];
            const key = `${label} | ${mode.replace('force_', '').replace('_plan', '')}`;
            let plan: string[] = [];
            const scans = await scansOf(pc, async () => {
              const result = await pc.query<{ 'QUERY PLAN': string }>(
                `EXPLAIN (ANALYZE, ${round < 2 ? '' : 'TIMING OFF, '}BUFFERS, WAL) EXECUTE v${v}(${params.map(literal).join(', ')})`,
              );
              plan = result.rows.map((r) => r['QUERY PLAN']);
            });
            const ms = Number(/Execution Time: ([\d.]+)/.exec(plan.join('\n'))?.[1]);
            const wal = Number(/WAL: records=(\d+)/.exec(plan.join('\n'))?.[1] ?? 0);
            const planMs = Number(/Planning Time: ([\d.]+)/.exec(plan.join('\n'))?.[1] ?? 0);
            const entry = timings.get(key) ?? { ms: [], planMs: [], wal, scans };
            if (round >= 2) {
              entry.ms.push(ms);
              entry.planMs.push(planMs);
            }
            timings.set(key, entry);
            if (round === 1) plans.push(`### ${key}\n\n\`\`\`\n${plan.join('\n')}\n\`\`\`\n`);
          }
        }
      }
      await pc.query('DEALLOCATE ALL');
      await pc.query('RESET plan_cache_mode');
    } finally {
      pc.release();
    }
    say();
    say(
      `## Variants on the same rows (EXPLAIN ANALYZE, TIMING OFF, median of 10 after two timed runs, custom and generic interleaved; read: ${readRows} rows, complete: ${rowsOf.length} rows)`,
    );
    say('| statement | plan | execution ms | µs per row | planning ms | WAL records | scans |');
    say('|---|---|---|---|---|---|---|');
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    for (const [key, entry] of [...timings].sort((a, b) => a[0].localeCompare(b[0]))) {
      const [label, mode] = key.split(' | ');
      const ms = median(entry.ms);
      const perRow = label?.includes('read') ? readRows : rowsOf.length;
      say(
        `| ${label} | ${mode} | ${ms.toFixed(2)} | ${((ms * 1000) / perRow).toFixed(2)} | ${median(entry.planMs).toFixed(2)} | ${entry.wal} | ${[...entry.scans].map(([n, c]) => `${n.replace(' idx_scan', '').replace(' seq_scan', ' (seq)')} ${c}`).join(', ')} |`,
      );
    }
    await soloStore.leases.leave(joined.relayId);
    await solo.end();

    say();
    say('## The table');
    for (const index of indexes.rows) say(`- ${index.indexdef.replace(`"${schema}".`, '').replace(`${schema}.`, '')}`);
    for (const trigger of triggers.rows) say(`- trigger ${trigger.def.replaceAll(`${schema}.`, '').replaceAll(`"${schema}".`, '')}`);
    say();
    say('## Plans');
    out.push(...plans);
    writeFileSync(outFile, `${out.join('\n')}\n`);
    console.log(`\nwritten to ${outFile} (with the plans)`);
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
