/**
 * Writer role: business transactions that lock an aggregate row, bump its version and enqueue the
 * events in the same transaction, together with a ledger row (the truth the checker trusts). Some roll
 * back, some stay open for seconds before committing (their seq values commit late), some carry poison.
 * With fan-out (`destinations`), the outbox's route stores each event once per destination: the ledger gets a
 * row per outbox row (its id and destination, as the store was asked to insert them) and the journal's commit
 * says which id each event has at each destination.
 */
import pg from 'pg';
import { Outbox } from '../../src/core/outbox.js';
import type { NewOutboxMessage } from '../../src/core/message.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { Journal } from '../journal.js';
import { laneIntervalMs } from '../load.js';
import { Prng } from '../prng.js';
import { DEFAULT_DESTINATION, ENV_PG_URL, type MessageKind, readRoleConfig, requireEnv, type WriterConfig } from '../spec.js';

const config = readRoleConfig<WriterConfig>('writer');
const { workload } = config;
const journal = new Journal(config.journal);
const pool = new pg.Pool({ connectionString: requireEnv(ENV_PG_URL), max: workload.lanes, application_name: `chaos-writer-${config.index}` });
pool.on('error', () => undefined);
/** The rows each transaction (by its client) asked the store to insert, with the ids the store returned. */
const inserted = new Map<unknown, { id: string; destination: string }[]>();
const inner = new PostgresOutboxStore(fromPgPool(pool), { schema: config.schema });
const store = new Proxy(inner, {
  get(target, property, receiver) {
    if (property === 'insert') {
      return async (tx: SqlExecutor, rows: readonly NewOutboxMessage[]) => {
        const ids = await target.insert(tx, rows);
        const list = inserted.get(tx) ?? [];
        rows.forEach((row, i) => list.push({ id: ids[i] as string, destination: row.destination ?? DEFAULT_DESTINATION }));
        inserted.set(tx, list);
        return ids;
      };
    }
    const value: unknown = Reflect.get(target, property, receiver);
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  },
});
const destinations = config.destinations ?? [DEFAULT_DESTINATION];
const outbox = new Outbox<SqlExecutor>(
  store,
  destinations.length > 1 || destinations[0] !== DEFAULT_DESTINATION
    ? {
        routes: [
          { topic: `${config.topicPrefix}.#`, to: [...destinations] },
          { topic: `${config.lateTopicPrefix}.#`, to: [...destinations] },
        ],
      }
    : {},
);
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
      // `m`: the event, the same at every destination (each row has its own id)
      const payload: Record<string, unknown> = { k: key, v, kind, w: config.index, lane, n, m: `${config.index}.${lane}.${n}.${i}` };
      if (kind === 'poison-large') payload.pad = 'x'.repeat(config.maxMessageBytes + 1024);
      if (kind === 'transient') payload.fail = prng.int(1, 2);
      const topic = kind === 'late-topology' ? `${config.lateTopicPrefix}.${key}` : `${config.topicPrefix}.${key}`;
      return { topic, type: `chaos.${kind}`, key, payload };
    });
    inserted.delete(client);
    const first = await outbox.enqueueMany(client, messages);
    const rows = inserted.get(client) ?? [];
    inserted.delete(client);
    if (rows.length !== first.length * destinations.length)
      throw new Error(`stored ${rows.length} rows for ${first.length} events to ${destinations.length} destinations`);
    // rows are in message order, each message's destinations in route order (`routes.expand`)
    const events = first.map((id, i) => ({
      v: base + i + 1,
      kind: kinds[i] as MessageKind,
      rows: rows.slice(i * destinations.length, (i + 1) * destinations.length),
    }));
    if (events.some((e, i) => e.rows[0]?.id !== first[i])) throw new Error('the first row of an event does not have the id enqueue returned');
    const ids = rows.map((row) => row.id);
    await client.query(`UPDATE ${q('aggregates')} SET version = $2 WHERE key = $1`, [key, base + count]);
    await client.query(
      `INSERT INTO ${q('ledger')} (id, key, version, kind, destination) SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[])`,
      [
        ids,
        ids.map(() => key),
        events.flatMap((e) => e.rows.map(() => e.v)),
        events.flatMap((e) => e.rows.map(() => e.kind)),
        rows.map((row) => row.destination),
      ],
    );
    // with fan-out: each event's id at each destination
    const to = destinations.length > 1 ? { to: events.map((e) => Object.fromEntries(e.rows.map((row) => [row.destination, row.id]))) } : {};
    if (holdMs > 0) await sleep(holdMs);
    if (rollback) {
      await client.query('ROLLBACK');
      journal.write({ e: 'rollback', ids, ...to });
    } else {
      await client.query('COMMIT');
      journal.write({ e: 'commit', ids, key, held: holdMs, ...to });
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
