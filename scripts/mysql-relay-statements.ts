/**
 * Where MariaDB's CPU goes when a relay drains, statement by statement, side by side (issue 23):
 * `node --import tsx scripts/mysql-relay-statements.ts <messages> <rounds> <name>=<checkout> ...`, e.g.
 * `... 30000 4 before=/tmp/n/wt-before after=.`. Each variant is the MySQL store of its checkout (its sources imported
 * in this process), on a database of its own, holding all 64 partitions. Per round and variant, in ABBA order: the
 * backlog (1,000 keys, ~200-byte JSON) is inserted in one statement, the server is let settle (no dirty pages, purge
 * done), then a loop drains it as the relay does in a drain with its defaults (reads of the 22 least recently read
 * partitions taking 23 rows each, then the completion of every row read, published with its seq), on one connection
 * at a time. mariadbd's CPU (all threads, /proc, 10 ms ticks) is charged to the statement that was running; per round
 * it prints the read's and the completion's CPU per message and the four costliest statements. Run it alone on the
 * server (it cannot tell other sessions' work apart) and under `flock /tmp/n/bench.lock` on a shared machine.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import mysql from 'mysql2/promise';
import { services } from '../bench/config.js';
import type { MysqlDatabase, MysqlExecutor } from '../src/stores/mysql/index.js';
import type * as MysqlStoreModule from '../src/stores/mysql/index.js';

const messages = Number(process.argv[2]);
const rounds = Number(process.argv[3]);
const specs = process.argv.slice(4);
if (!Number.isSafeInteger(messages) || messages < 1 || !Number.isSafeInteger(rounds) || rounds < 1 || specs.length === 0) {
  throw new Error('usage: mysql-relay-statements.ts <messages> <rounds> <name>=<checkout> ...');
}

const serverPid = execFileSync('pidof', ['mariadbd']).toString().trim().split(' ')[0] ?? '';
/** mariadbd's CPU so far, in ms. */
function serverCpuMs(): number {
  const fields = readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const admin = await mysql.createConnection({ uri: services.mysqlUrl });
async function status(sql: string, pattern: RegExp): Promise<number> {
  const [rows] = await admin.query(sql);
  return Number(pattern.exec(JSON.stringify(rows))?.[1] ?? Number.NaN);
}
/** Waits until purge has caught up and no page is dirty, so that one round's background work does not land in the next. */
async function settle(): Promise<void> {
  for (let i = 0; i < 600 && (await status('SHOW ENGINE INNODB STATUS', /History list length (\d+)/)) > 20; i++) await sleep(200);
  await admin.query('SET GLOBAL innodb_max_dirty_pages_pct = 0');
  try {
    for (let i = 0; i < 600 && (await status("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'", /"Value":"(\d+)"/)) > 0; i++) await sleep(200);
  } finally {
    await admin.query('SET GLOBAL innodb_max_dirty_pages_pct = 90');
  }
  await sleep(1000);
}
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The store's database with each statement's share of mariadbd's CPU added to `costs`, by the statement's first words. */
function charged(database: MysqlDatabase, costs: Map<string, { ms: number; count: number }>): MysqlDatabase {
  const charge = (executor: MysqlExecutor): MysqlExecutor => ({
    async query(sql, params) {
      const before = serverCpuMs();
      const result = await executor.query(sql, params);
      const kind = sql.includes("'fresh' AS source") ? 'the read SELECT' : sql.replace(/\s+/g, ' ').slice(0, 48);
      const cost = costs.get(kind) ?? { ms: 0, count: 0 };
      cost.ms += serverCpuMs() - before;
      cost.count++;
      costs.set(kind, cost);
      return result;
    },
  });
  return {
    ...database,
    ...charge(database),
    transaction: (work) => database.transaction((tx, c) => work(charge(tx), c)),
    session: (work) => database.session((s) => work(charge(s))),
  };
}

async function variant(name: string, checkout: string) {
  const store = (await import(resolve(checkout, 'src/stores/mysql/index.ts'))) as typeof MysqlStoreModule;
  const database = `outboxer_statements_${name}`.replace(/[^A-Za-z0-9_]/g, '_');
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.query(`CREATE DATABASE \`${database}\``);
  const url = new URL(services.mysqlUrl);
  url.pathname = `/${database}`;
  const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 2, supportBigNumbers: true, bigNumberStrings: true });
  const costs = new Map<string, { ms: number; count: number }>();
  const outbox = new store.MysqlOutboxStore(charged(store.fromMysqlPool(pool), costs));
  await outbox.migrate();
  const { relayId } = await outbox.leases.join({ name, leaseMs: 3_600_000 });
  const leases = await outbox.leases.acquire(relayId, 64);
  const epochs = new Map(leases.map((l) => [l.partition, l.epoch]));

  async function drain() {
    await pool.query(`INSERT INTO outbox (topic, type, \`key\`, payload)
      SELECT 'orders', 'bench', CONCAT('k-', seq % 1000), CONCAT('{"n": ', seq, ', "pad": "', REPEAT('x', 180), '"}') FROM seq_1_to_${messages} ORDER BY seq`);
    await settle();
    costs.clear();
    const positions = new Map<number, string | null>(leases.map((l) => [l.partition, null]));
    const readAt = new Map<number, number>(leases.map((l) => [l.partition, 0]));
    let [readMs, completeMs, drained, tick, emptyReads] = [0, 0, 0, 0, 0];
    while (emptyReads < 3) {
      const partitions = [...readAt]
        .sort((a, b) => a[1] - b[1])
        .slice(0, 22)
        .map(([p]) => p);
      for (const p of partitions) readAt.set(p, ++tick);
      const started = serverCpuMs();
      const read = await outbox.reader.read(
        relayId,
        64,
        partitions.map((p) => ({ partition: p, epoch: epochs.get(p) ?? '', after: positions.get(p) ?? null, recheck: null, limit: 23 })),
      );
      const readDone = serverCpuMs();
      readMs += readDone - started;
      if (read.messages.length === 0) {
        emptyReads++;
        continue;
      }
      emptyReads = 0;
      for (const o of read.partitions) if (o.reached !== null) positions.set(o.partition, o.reached);
      const completions = [...new Set(read.messages.map((m) => m.partition))].map((partition) => {
        const rows = read.messages.filter((m) => m.partition === partition);
        return { partition, epoch: epochs.get(partition) ?? '', published: rows.map((m) => m.id), publishedSeqs: rows.map((m) => m.seq), failed: [], held: [] };
      });
      await outbox.reader.complete(relayId, completions, { partitionCount: 64 });
      completeMs += serverCpuMs() - readDone;
      drained += read.messages.length;
    }
    const top = [...costs].sort((a, b) => b[1].ms - a[1].ms).slice(0, 4);
    return {
      read: (readMs * 1000) / drained,
      complete: (completeMs * 1000) / drained,
      top: top.map(([kind, c]) => [kind, (c.ms * 1000) / drained, c.count] as const),
    };
  }
  return { name, drain, close: async () => (await pool.end(), await admin.query(`DROP DATABASE \`${database}\``)) };
}

const variants = [];
for (const spec of specs) {
  const [name = '', checkout = ''] = spec.split('=');
  variants.push(await variant(name, checkout));
}
try {
  for (let round = 0; round < rounds; round++) {
    for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
      const m = await v.drain();
      console.log(
        `round ${round} ${v.name}: mariadbd µs/msg read ${m.read.toFixed(1)}, completion ${m.complete.toFixed(1)}, both ${(m.read + m.complete).toFixed(1)}`,
      );
      for (const [kind, us, count] of m.top) console.log(`    ${us.toFixed(1).padStart(6)} µs/msg  ${String(count).padStart(5)} x  ${kind}`);
    }
  }
} finally {
  for (const v of variants) await v.close();
  await admin.end();
}
