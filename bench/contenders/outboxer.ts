import type pg from 'pg';
import { Outbox, type Publisher, type Relay, type RelayOptionsInput, resolveRelayOptions } from '../../src/index.js';
import { fromPgPool, PostgresOutboxStore, type SqlExecutor } from '../../src/stores/postgres/index.js';
import type { Engine } from '../config.js';
import { benchPool, bulkLoad, uniqueName } from '../support/database.js';
import { benchObservability } from '../support/observability.js';
import { engineRelayOptions, useEngine } from '../support/engine.js';
import { partitionReadTimer } from '../support/partition-read-timer.js';
import { keyOf, MESSAGE_TYPE, payloadOf, payloadSql } from '../support/workload.js';
import type { ContenderOptions, RelayContender } from './contender.js';

/** The relay runs with the library's own defaults (whatever they are at this commit); the report shows them. */
const defaults = resolveRelayOptions();
export const OUTBOXER_RELAY_SETTINGS = Object.freeze({
  batchSize: defaults.batchSize,
  maxInFlight: defaults.maxInFlight,
  lanes: defaults.lanes,
  pollIntervalMs: defaults.pollIntervalMs,
  maxPollIntervalMs: defaults.maxPollIntervalMs,
});

/** A transaction runner over one dedicated client (the writer's connection). */
function onClient(client: pg.PoolClient) {
  return {
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      await client.query('BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    },
  };
}

export interface OutboxerSettings {
  /** The bench's `engine` setting: the table's engine and the relay's `engine` option. Default v2. */
  readonly engine?: Engine;
  readonly relayOptions?: RelayOptionsInput;
  /**
   * Metrics and tracing on, as a production service runs them (`outboxer+ops`): `OutboxerMetrics` scraped every
   * second and OpenTelemetry spans through the SDK on enqueue and publish (bench/support/observability.ts).
   */
  readonly observed?: boolean;
}

/** outboxer through its public API: PostgresOutboxStore over a pg Pool, Outbox.enqueue, Outbox.createRelay. */
export function outboxerContender(
  { workload, relayConnections }: ContenderOptions,
  settings: OutboxerSettings = {},
): RelayContender & { readonly schema: string } {
  const engine = settings.engine ?? 'v2';
  const relayOptions: RelayOptionsInput = { ...settings.relayOptions, ...engineRelayOptions(engine) };
  const schema = uniqueName('bench_outboxer');
  const appName = `bench-outboxer-${schema.slice(-5)}`;
  const pool = benchPool(appName, relayConnections);
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema, table: 'outbox' });
  const ops = settings.observed === true ? benchObservability('bench') : undefined;
  const outbox = new Outbox<SqlExecutor>(store, ops?.enqueue === undefined ? {} : { instrumentation: ops.enqueue });
  const table = `"${schema}".outbox`;
  let relay: Relay | undefined;
  return {
    name: ops === undefined ? 'outboxer' : 'outboxer+ops',
    appName,
    schema,
    async setup(admin) {
      await store.migrate();
      await useEngine(admin, schema, 'outbox', engine);
    },
    async load(admin, first, count) {
      // Plain SQL is a documented producer: id, headers and timestamps come from the table's defaults.
      await bulkLoad(
        admin,
        count,
        (from, to) => `INSERT INTO ${table} (topic, type, key, payload)
        SELECT '${workload.topic}', '${MESSAGE_TYPE}', 'k-' || (g % ${workload.keys}), ${payloadSql('g', workload)}
        FROM generate_series(${first + from}, ${first + to}) g`,
      );
      await admin.query(`ANALYZE ${table}`);
    },
    enqueue(client: pg.PoolClient, n: number) {
      return outbox.enqueue(client, { topic: workload.topic, type: MESSAGE_TYPE, key: keyOf(n, workload), payload: payloadOf(n, workload) });
    },
    committed() {
      outbox.notifyCommitted();
    },
    // BEGIN/COMMIT by outbox.transaction, which wakes the in-process relay after the commit (on older commits,
    // the hand-off). BENCH_OUTBOXER_PATH=wake measures the other documented path instead: the writer's own
    // transaction, then notifyCommitted().
    ...(process.env.BENCH_OUTBOXER_PATH === 'wake'
      ? {}
      : {
          transaction<T>(client: pg.PoolClient, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
            // The runner hands `client` itself to the work, so the enqueues inside are on its transaction.
            return outbox.transaction(onClient(client), () => work(client));
          },
        }),
    async start(publisher: Publisher) {
      if (ops === undefined) relay = outbox.createRelay(publisher, relayOptions);
      else {
        relay = outbox.createRelay(ops.wrap(publisher), { ...relayOptions, hooks: ops.hooks });
        ops.observe(relay, store);
      }
      relay.start();
    },
    async stop() {
      await relay?.stop();
      relay = undefined;
    },
    async pending(admin) {
      const result = await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE state = 'pending'`);
      return (result.rows[0] as { n: number }).n;
    },
    // engine v2 has no claim: its counterpart, a read of every partition, is timed instead
    claimOnce: partitionReadTimer(store),
    async teardown(admin) {
      await relay?.stop();
      await ops?.close();
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}
