import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { JSON_CONTENT_TYPE, type OutboxMessage, type Publisher } from '../../src/index.js';
import { benchPool, bulkLoad, uniqueName } from '../support/database.js';
import { keyOf, MESSAGE_TYPE, payloadOf, payloadSql } from '../support/workload.js';
import type { ContenderOptions, RelayContender } from './contender.js';

export const NAIVE_POLL_MS = 250;

interface NaiveRow {
  seq: string;
  id: string;
  topic: string;
  key: string | null;
  payload: string;
  created_at: Date;
}

/**
 * The relay as the seeds describe it: SELECT the oldest unpublished row, publish it and wait for the
 * confirm, UPDATE it as published, repeat; sleep NAIVE_POLL_MS when there is nothing. Given the benefit of
 * the doubt: a partial index on unpublished rows, and no sleep while rows keep coming.
 */
export function naiveRelayContender({ workload }: ContenderOptions): RelayContender {
  const schema = uniqueName('bench_naive');
  const appName = `bench-naive-${schema.slice(-5)}`;
  const pool = benchPool(appName, 1);
  const table = `"${schema}".outbox`;
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  // seq comes back as text anyway (pg returns int8 as a string); casting it in the SELECT list would make
  // ORDER BY seq sort by the text alias, a full scan instead of the partial index.
  const selectOne = `SELECT seq, id::text AS id, topic, key, payload::text AS payload, created_at FROM ${table} WHERE published_at IS NULL ORDER BY seq LIMIT 1`;
  const run = async (publisher: Publisher): Promise<void> => {
    while (!stopping) {
      const row = (await pool.query(selectOne)).rows[0] as NaiveRow | undefined;
      if (row === undefined) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, NAIVE_POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        continue;
      }
      const message: OutboxMessage = {
        id: row.id,
        seq: row.seq,
        topic: row.topic,
        type: MESSAGE_TYPE,
        key: row.key,
        body: row.payload,
        contentType: JSON_CONTENT_TYPE,
        headers: {},
        createdAt: row.created_at,
        attempts: 1,
        lastError: null,
      };
      try {
        await publisher.publish(message);
      } catch {
        continue; // the next poll picks it up again
      }
      await pool.query(`UPDATE ${table} SET published_at = now() WHERE seq = $1`, [row.seq]);
    }
  };

  return {
    name: 'naive relay',
    appName,
    async setup(admin) {
      await admin.query(`CREATE SCHEMA "${schema}";
        CREATE TABLE ${table} (seq bigserial PRIMARY KEY, id uuid NOT NULL, topic text NOT NULL, key text,
          payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT clock_timestamp(), published_at timestamptz);
        CREATE INDEX ON ${table} (seq) WHERE published_at IS NULL;`);
    },
    async load(admin, first, count) {
      await bulkLoad(
        admin,
        count,
        (from, to) => `INSERT INTO ${table} (id, topic, key, payload)
        SELECT gen_random_uuid(), '${workload.topic}', 'k-' || (g % ${workload.keys}), ${payloadSql('g', workload)}
        FROM generate_series(${first + from}, ${first + to}) g`,
      );
      await admin.query(`ANALYZE ${table}`);
    },
    async enqueue(client: pg.PoolClient, n: number) {
      const id = randomUUID();
      await client.query(`INSERT INTO ${table} (id, topic, key, payload) VALUES ($1, $2, $3, $4)`, [
        id,
        workload.topic,
        keyOf(n, workload),
        JSON.stringify(payloadOf(n, workload)),
      ]);
      return id;
    },
    committed() {},
    async start(publisher) {
      stopping = false;
      loop = run(publisher);
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      loop = undefined;
    },
    async pending(admin) {
      const result = await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE published_at IS NULL`);
      return (result.rows[0] as { n: number }).n;
    },
    async claimOnce() {
      const started = performance.now();
      const result = await pool.query(selectOne);
      return { claimed: result.rows.length, ms: performance.now() - started };
    },
    async teardown(admin) {
      await this.stop();
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}
