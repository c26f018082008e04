import type pg from 'pg';
import { Logger, run, runMigrations, type Runner, type Task } from 'graphile-worker';
import { JSON_CONTENT_TYPE, type Publisher } from '../../src/index.js';
import { benchPool, bulkLoad, uniqueName } from '../support/database.js';
import { keyOf, MESSAGE_TYPE, payloadOf, payloadSql } from '../support/workload.js';
import type { ContenderOptions, RelayContender } from './contender.js';

const TASK = 'publish';
const silent = new Logger(() => () => undefined);

/**
 * graphile-worker 0.17 as an outbox: the writer adds a job in its own transaction
 * (`<schema>.add_job(...)`, its SQL API), and a worker runs a task that publishes the job with confirm.
 * Per-key order: `queue_name` = the message key, and graphile-worker runs the jobs of a named queue one at a
 * time, oldest first. (`job_key` is not for order: a second job with the same job_key replaces the first.)
 * A failed job is rescheduled with back-off and its queue's later jobs may overtake it. Concurrency: twice
 * the relay's connections (each running job holds none while it publishes; fetch and completion borrow one).
 */
export function graphileWorkerContender({ workload, relayConnections }: ContenderOptions): RelayContender {
  const schema = uniqueName('bench_graphile');
  const appName = `bench-graphile-${schema.slice(-5)}`;
  const pool = benchPool(appName, relayConnections);
  // graphile-worker warns about a pool whose clients have no error handler (an idle client's error would be thrown).
  pool.on('connect', (client) => client.on('error', () => undefined));
  let runner: Runner | undefined;

  return {
    name: 'graphile-worker',
    appName,
    async setup() {
      await runMigrations({ pgPool: pool, schema, logger: silent });
    },
    async load(admin, first, count) {
      await bulkLoad(
        admin,
        count,
        (from, to) => `SELECT "${schema}".add_job('${TASK}', (${payloadSql('g', workload)})::json, queue_name => 'k-' || (g % ${workload.keys}))
        FROM generate_series(${first + from}, ${first + to}) g`,
      );
      await admin.query(`ANALYZE "${schema}"._private_jobs`);
    },
    async enqueue(client: pg.PoolClient, n: number) {
      const result = await client.query(`SELECT id::text AS id FROM "${schema}".add_job($1, $2::json, queue_name => $3)`, [
        TASK,
        JSON.stringify(payloadOf(n, workload)),
        keyOf(n, workload),
      ]);
      return (result.rows[0] as { id: string }).id;
    },
    committed() {},
    async start(publisher: Publisher) {
      const publish: Task = async (payload, helpers) => {
        const { job } = helpers;
        // The key is the job's queue name; the payload's number gives it without the extra query of helpers.getQueueName().
        const key = keyOf((payload as { n: number }).n, workload);
        await publisher.publish({
          id: job.id,
          seq: job.id,
          topic: workload.topic,
          type: MESSAGE_TYPE,
          key,
          body: JSON.stringify(payload),
          contentType: JSON_CONTENT_TYPE,
          headers: {},
          createdAt: job.created_at,
          attempts: job.attempts,
          lastError: job.last_error,
        });
      };
      runner = await run({ pgPool: pool, schema, concurrency: 2 * relayConnections, noHandleSignals: true, logger: silent, taskList: { [TASK]: publish } });
    },
    async stop() {
      await runner?.stop();
      runner = undefined;
    },
    async pending(admin) {
      const result = await admin.query(`SELECT count(*)::int AS n FROM "${schema}"._private_jobs`);
      return (result.rows[0] as { n: number }).n;
    },
    async teardown(admin) {
      await this.stop();
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}
