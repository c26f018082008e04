import type pg from 'pg';
import PgBoss from 'pg-boss';
import { JSON_CONTENT_TYPE, type OutboxMessage, type Publisher } from '../../src/index.js';
import { services } from '../config.js';
import { bulkLoad, uniqueName } from '../support/database.js';
import { keyOf, MESSAGE_TYPE, payloadOf, payloadSql } from '../support/workload.js';
import type { ContenderOptions, RelayContender } from './contender.js';
import { OUTBOXER_RELAY_SETTINGS } from './outboxer.js';

/** pg-boss's shortest polling interval (it refuses less). */
export const PGBOSS_POLL_SECONDS = 0.5;
const QUEUE = 'bench-publish';

/**
 * pg-boss 10 as an outbox: the writer sends a job in its own transaction (`send` with the `db` option, an
 * executeSql over the writer's connection), and a pg-boss worker publishes each job with confirm. Per-key
 * order as far as pg-boss 10 keeps it: a `singleton` queue with `singletonKey` = the message key allows one
 * active job per key (a unique index), and a batch fetch takes at most one job per key, oldest first. A job
 * that fails goes to `retry` and its key's later jobs may overtake it. One worker (a second one's fetch
 * fails on that index whenever the batches share a key, and pg-boss swallows the error), a batch of the
 * relay's window, published concurrently; the worker waits out its polling interval after every batch.
 */
export function pgBossContender({ workload, relayConnections }: ContenderOptions): RelayContender {
  const schema = uniqueName('bench_pgboss');
  const appName = `bench-pgboss-${schema.slice(-5)}`;
  const base = { connectionString: services.postgresUrl, schema };
  // Creates the schema and the queue, and builds the writers' insert; it runs no maintenance of its own.
  const producer = new PgBoss({ ...base, application_name: `${appName}-producer`, max: 1, supervise: false, schedule: false });
  // Failed publishes are counted by the confirm clock; a failed fetch shows as a slower drain.
  producer.on('error', () => undefined);
  let relay: PgBoss | undefined;
  let stopping = false;
  /** The publishes of handlers still running: awaited by stop(). */
  const inFlight = new Set<Promise<unknown>>();

  const toMessage = (job: PgBoss.JobWithMetadata): OutboxMessage => ({
    id: job.id,
    seq: '0',
    topic: workload.topic,
    type: MESSAGE_TYPE,
    key: job.singletonKey,
    body: JSON.stringify(job.data),
    contentType: JSON_CONTENT_TYPE,
    headers: {},
    createdAt: job.createdOn,
    attempts: job.retryCount + 1,
    lastError: null,
  });

  return {
    name: 'pg-boss',
    appName,
    async setup() {
      await producer.start();
      await producer.createQueue(QUEUE, { name: QUEUE, policy: 'singleton' });
    },
    async load(admin, first, count) {
      // created_on is the fetch order: one microsecond apart keeps each key's order within a bulk statement.
      await bulkLoad(
        admin,
        count,
        (from, to) => `INSERT INTO "${schema}".job (name, data, singleton_key, policy, created_on)
        SELECT '${QUEUE}', ${payloadSql('g', workload)}, 'k-' || (g % ${workload.keys}), 'singleton', now() + g * interval '1 microsecond'
        FROM generate_series(${first + from}, ${first + to}) g`,
      );
      await admin.query(`ANALYZE "${schema}".job`);
    },
    async enqueue(client: pg.PoolClient, n: number) {
      const key = keyOf(n, workload);
      const db = { executeSql: (text: string, values: unknown[]) => client.query(text, values) };
      const id = await producer.send(QUEUE, payloadOf(n, workload), { singletonKey: key, db });
      if (id === null) throw new Error(`pg-boss refused job ${n} (singleton key ${key})`);
      return id;
    },
    committed() {},
    async start(publisher: Publisher) {
      stopping = false;
      relay = new PgBoss({ ...base, application_name: appName, max: relayConnections });
      relay.on('error', () => undefined);
      await relay.start();
      await relay.work<object>(
        QUEUE,
        { batchSize: OUTBOXER_RELAY_SETTINGS.maxInFlight, pollingIntervalSeconds: PGBOSS_POLL_SECONDS, includeMetadata: true },
        async (jobs) => {
          // a batch fetched while stopping is given back (failed, retried later), so every publish counts before stop() returns
          if (stopping) throw new Error('pg-boss contender stopping');
          const publishes = Promise.all(jobs.map((job) => publisher.publish(toMessage(job))));
          inFlight.add(publishes);
          try {
            await publishes;
          } finally {
            inFlight.delete(publishes);
          }
        },
      );
    },
    async stop() {
      // Graceful, but pg-boss 10's stop can return while a handler still publishes (timgit/pg-boss#421): wait for those too.
      stopping = true;
      await relay?.stop({ graceful: true, wait: true, timeout: 30_000 });
      await Promise.allSettled([...inFlight]);
      relay = undefined;
    },
    async pending(admin) {
      const result = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".job WHERE name = $1 AND state < 'completed'`, [QUEUE]);
      return (result.rows[0] as { n: number }).n;
    },
    async teardown(admin) {
      await this.stop();
      await producer.stop({ graceful: false, wait: true });
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}
