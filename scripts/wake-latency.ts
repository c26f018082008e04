/**
 * Commit-to-publish latency of the two wake-up paths on a database without NOTIFY (docs/design/dialects.md, "MariaDB / MySQL
 * and SQLite"): the in-process hand-off (`outbox.transaction` wakes the relay of the same Outbox) and polling (a
 * writer elsewhere: the relay finds the row at its next poll). The publisher is in memory, so the numbers are the
 * outbox's own path, without a broker.
 *
 *   npx tsx scripts/wake-latency.ts sqlite            # a temporary SQLite file
 *   npx tsx scripts/wake-latency.ts mysql [url]       # default mysql://root@127.0.0.1:3306/test, a fresh database
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { Outbox } from '../src/core/outbox.js';
import type { OutboxMessage } from '../src/core/message.js';
import type { Publisher } from '../src/core/ports.js';
import { validateMessage } from '../src/core/validate-message.js';
import { fromMysqlPool } from '../src/stores/mysql/database.js';
import { MysqlOutboxStore } from '../src/stores/mysql/mysql-store.js';
import { openSqliteStore } from '../src/stores/sqlite/open-sqlite.js';

const SAMPLES = 40;
const committedAt = new Map<string, number>();
const latencies: number[] = [];
let arrived: (() => void) | undefined;

const publisher: Publisher = {
  name: 'memory',
  capabilities: {},
  async publish(message: OutboxMessage) {
    const at = committedAt.get(message.id);
    if (at !== undefined) latencies.push(performance.now() - at);
    arrived?.();
  },
  async close() {},
};

interface Target {
  readonly outbox: Outbox<never>;
  /** In a transaction of the relay's own Outbox: wakes the relay after the commit. */
  inProcess(id: string): Promise<void>;
  /** As a writer in another process: a transaction on another connection, no wake-up. */
  elsewhere(id: string): Promise<void>;
  close(): Promise<void>;
}

const message = (id: string) => validateMessage({ id, topic: 'latency.probe', type: 'probe', payload: {} }, { maxPayloadBytes: 1024 });

async function sqliteTarget(): Promise<Target> {
  const directory = mkdtempSync(join(tmpdir(), 'outboxer-latency-'));
  const file = join(directory, 'latency.db');
  const store = await openSqliteStore(file);
  await store.migrate();
  const writer = await openSqliteStore(file);
  const outbox = new Outbox(store);
  return {
    outbox: outbox as unknown as Outbox<never>,
    inProcess: (id) =>
      outbox.transaction(store.database, async (tx) => void (await store.insert(tx, [message(id)]))).then(() => void committedAt.set(id, performance.now())),
    elsewhere: (id) =>
      writer.database.transaction(async (tx) => void (await writer.insert(tx, [message(id)]))).then(() => void committedAt.set(id, performance.now())),
    async close() {
      await writer.close();
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function mysqlTarget(url: string): Promise<Target> {
  const name = `latency_${Date.now().toString(36)}`;
  const admin = await mysql.createConnection({ uri: url });
  await admin.query(`CREATE DATABASE \`${name}\``);
  const at = new URL(url);
  at.pathname = `/${name}`;
  const pool = mysql.createPool({ uri: at.toString(), connectionLimit: 6 });
  const database = fromMysqlPool(pool);
  const store = new MysqlOutboxStore(database);
  await store.migrate();
  const outbox = new Outbox(store);
  const write = async (id: string) => {
    await database.transaction((tx) => store.insert(tx, [message(id)]));
    committedAt.set(id, performance.now());
  };
  return {
    outbox: outbox as unknown as Outbox<never>,
    async inProcess(id) {
      await write(id);
      outbox.notifyCommitted();
    },
    elsewhere: write,
    async close() {
      await pool.end();
      await admin.query(`DROP DATABASE \`${name}\``);
      await admin.end();
    },
  };
}

function summary(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN).toFixed(1);
  return `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms (n=${sorted.length})`;
}

async function measure(target: Target, path: 'inProcess' | 'elsewhere', gapMs: () => number, samples = SAMPLES): Promise<string> {
  latencies.length = 0;
  for (let i = 0; i < samples; i++) {
    await new Promise((resolve) => setTimeout(resolve, gapMs()));
    const done = new Promise<void>((resolve) => (arrived = resolve));
    await target[path](crypto.randomUUID());
    await done;
  }
  return summary(latencies);
}

const kind = process.argv[2] ?? 'sqlite';
const target = kind === 'mysql' ? await mysqlTarget(process.argv[3] ?? 'mysql://root@127.0.0.1:3306/test') : await sqliteTarget();
const relay = target.outbox.createRelay(publisher, { pollIntervalMs: 250, maxPollIntervalMs: 2000 });
relay.start();
await new Promise((resolve) => setTimeout(resolve, 1500)); // partitions acquired
console.log(`${kind}, in-process hand-off (gaps 0-300 ms): ${await measure(target, 'inProcess', () => Math.random() * 300)}`);
console.log(`${kind}, polling while busy (gaps 0-200 ms): ${await measure(target, 'elsewhere', () => Math.random() * 200)}`);
console.log(`${kind}, polling after idle spells (gaps 3-4 s): ${await measure(target, 'elsewhere', () => 3000 + Math.random() * 1000, 12)}`);
await target.outbox.close();
await target.close();
