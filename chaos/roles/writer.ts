/**
 * Writer role: business transactions that lock an aggregate row, bump its version and enqueue the
 * events in the same transaction, together with a ledger row (the truth the checker trusts). Some roll
 * back, some stay open for seconds before committing (their seq values commit late), some carry poison.
 */
import pg from 'pg';
import { Outbox } from '../../src/core/outbox.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { Journal } from '../journal.js';
import { laneIntervalMs } from '../load.js';
import { Prng } from '../prng.js';
import { ENV_PG_URL, type MessageKind, readRoleConfig, requireEnv, type WriterConfig } from '../spec.js';

const config = readRoleConfig<WriterConfig>('writer');
const { workload } = config;
const journal = new Journal(config.journal);
const pool = new pg.Pool({ connectionString: requireEnv(ENV_PG_URL), max: workload.lanes, application_name: `chaos-writer-${config.index}` });
pool.on('error', () => undefined);
const store = new PostgresOutboxStore(fromPgPool(pool), { schema: config.schema });
const outbox = new Outbox<SqlExecutor>(store);
const q = (name: string) => `"${config.schema}".${name}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function kindOf(prng: Prng): MessageKind {
  const roll = prng.next();
  if (roll < workload.poisonLargeShare) return 'poison-large';
  if (roll < workload.poisonLargeShare + workload.lateTopologyShare) return 'late-topology';
  if (roll < workload.poisonLargeShare + workload.lateTopologyShare + workload.transientShare) return 'transient';
  return 'normal';
}

async function transaction(prng: Prng, lane: number, n: number): Promise<void> {
  const key = `k${prng.int(0, workload.keys - 1)}`;
  const count = prng.int(1, workload.maxMessagesPerTxn);
  const rollback = prng.chance(workload.rollbackShare);
  const holdMs = prng.chance(workload.longOpenShare) ? prng.int(workload.longOpenMs[0], workload.longOpenMs[1]) : 0;
  const kinds = Array.from({ length: count }, () => kindOf(prng));
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const locked = await client.query(`SELECT version FROM ${q('aggregates')} WHERE key = $1 FOR UPDATE`, [key]);
    const base = Number((locked.rows[0] as { version: number } | undefined)?.version ?? 0);
    const messages = kinds.map((kind, i) => {
      const v = base + i + 1;
      const payload: Record<string, unknown> = { k: key, v, kind, w: config.index, lane, n };
      if (kind === 'poison-large') payload.pad = 'x'.repeat(config.maxMessageBytes + 1024);
      if (kind === 'transient') payload.fail = prng.int(1, 2);
      const topic = kind === 'late-topology' ? `${config.lateTopicPrefix}.${key}` : `${config.topicPrefix}.${key}`;
      return { topic, type: `chaos.${kind}`, key, payload };
    });
    const ids = await outbox.enqueueMany(client, messages);
    await client.query(`UPDATE ${q('aggregates')} SET version = $2 WHERE key = $1`, [key, base + count]);
    await client.query(
      `INSERT INTO ${q('ledger')} (id, key, version, kind) SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[])`,
      [ids, ids.map(() => key), ids.map((_, i) => base + i + 1), kinds],
    );
    if (holdMs > 0) await sleep(holdMs);
    if (rollback) {
      await client.query('ROLLBACK');
      journal.write({ e: 'rollback', ids });
    } else {
      await client.query('COMMIT');
      journal.write({ e: 'commit', ids, key, held: holdMs });
    }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    journal.write({ e: 'failed', error: error instanceof Error ? error.message : String(error) });
  } finally {
    client.release();
  }
}

async function lane(index: number): Promise<void> {
  const prng = new Prng(config.seed).fork(`writer-${config.index}-lane-${index}`);
  const share = Math.ceil(workload.txnsPerWriter / workload.lanes);
  const interval = laneIntervalMs(workload);
  // Lanes of all writers start spread over one interval, so that the schedule does not come in bursts.
  const start = Date.now() + (interval ?? 0) * ((config.index * workload.lanes + index) / (workload.writers * workload.lanes));
  for (let n = 0; n < share; n++) {
    if (interval !== null) await sleep(start + n * interval - Date.now());
    await transaction(prng, index, n);
    const pace = prng.int(workload.paceMs[0], workload.paceMs[1]);
    if (pace > 0) await sleep(pace);
  }
}

await Promise.all(Array.from({ length: workload.lanes }, (_, i) => lane(i)));
journal.write({ e: 'done' });
journal.close();
await pool.end();
