import { Outbox, type OutboxMessageInput } from '../../src/index.js';
import { defineTransaction } from '../../src/core/ports/outbox-transaction.js';
import { fromPgPool, PostgresOutboxStore } from '../../src/stores/postgres/index.js';
import { toPgTransaction } from '../../src/stores/postgres/pg-transaction.js';
import { services } from '../config.js';
import { ConfirmClock } from '../measure/confirm-clock.js';
import { LatencyHistogram } from '../measure/latency-histogram.js';
import { createBrokerTarget } from '../support/broker-target.js';
import { benchPool, uniqueName } from '../support/database.js';
import { engineRelayOptions, useEngine } from '../support/engine.js';
import { type OrmBenchOutbox, type OrmPath, type OrmRig, rawPgPath } from '../support/orm-path.js';
import { chosenOrms, ORM_PATHS } from '../support/orm-paths.js';
import { keyOf, MESSAGE_TYPE, payloadOf } from '../support/workload.js';
import { settle } from './relay-session.js';
import { newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

const RELAY_CONNECTIONS = 2;
/** How long a commit-to-confirm sample waits for its message before counting it as missing. */
const CONFIRM_BOUND_MS = 10_000;
/** Transactions per path before anything is timed (JIT, prepared statements, the ORMs' caches); fewer at smoke size. */
const WARMUP_TRANSACTIONS = 50;
/** Order ids of path i start at i x this, so each path's business rows can be counted apart. */
const ORDER_ID_SPAN = 10_000_000;
const TARGET_RATIO = 1.05;

/** One path under measurement: what it enqueued, how long each enqueue took, and what its handle proved. */
interface Measured {
  readonly path: OrmPath;
  /** Message type suffix and order id range: the checks count each path's rows apart. */
  readonly index: number;
  readonly slug: string;
  readonly enqueueMs: LatencyHistogram;
  cpuMicros: number;
  /** Transactions committed through this path in the enqueue phase (warm-up included). */
  committed: number;
  failures: number;
  lastError?: string;
  statementsPerEnqueue?: number;
  /** What the handle's `status()` said inside the open transaction: 'open' = the driver vouched, no probe. */
  status?: string;
  /** Whether the store's INSERT stayed prepared on the path's connection (the handle passed the statement's name on). */
  prepared?: boolean;
  readonly confirmMs: LatencyHistogram;
  confirmCommitted: number;
  confirmMissing: number;
}

/**
 * (j) ORM adapters on PostgreSQL: the cost of each adapter on `outbox.enqueue` beside a raw pg client, and
 * commit-to-confirm through `outbox.transaction(() => ormTransaction)` beside `outbox.transaction(fromPgPool(pool), ...)`.
 * Every path has one connection of its own and runs alone: transactions one after another, the paths interleaved.
 */
export async function ormAdapters(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, admin, log } = context;
  const orms = chosenOrms();
  const warmup = Math.min(WARMUP_TRANSACTIONS, sizes.ormTransactions);
  const result = newResult('j', `ORM adapters beside raw pg: enqueue cost and commit-to-confirm (PostgreSQL, ${orms.length} adapters)`, {
    rounds: sizes.ormRounds,
    transactionsPerRound: sizes.ormTransactions,
    warmup,
    confirmSamples: sizes.ormConfirmSamples,
    relayConnections: RELAY_CONNECTIONS,
    payloadBytes: sizes.payloadBytes,
    broker: 'rabbitmq',
  });
  const schema = uniqueName('bench_orm');
  const rig: OrmRig = { schema, url: services.postgresUrl, applicationName: (path) => `bench-orm-${path}` };
  const storePool = benchPool('bench-orm-store', RELAY_CONNECTIONS);
  const paths: OrmPath[] = [];
  try {
    const enqueueStore = new PostgresOutboxStore(fromPgPool(storePool), { schema, table: 'outbox' });
    await enqueueStore.migrate();
    await admin.query(`CREATE TABLE "${schema}".orders (id int PRIMARY KEY, note text NOT NULL)`);
    paths.push(rawPgPath(rig));
    for (const orm of orms) {
      try {
        paths.push(await (ORM_PATHS[orm] as (rig: OrmRig) => Promise<OrmPath>)(rig));
      } catch (error) {
        result.checks.push({ name: `${orm}: set up on PostgreSQL`, ok: false, detail: errorText(error) });
      }
    }
    const measured = paths.map((path, index): Measured => ({
      path,
      index,
      slug: path.name.toLowerCase().replaceAll(' ', '-'),
      enqueueMs: new LatencyHistogram(),
      cpuMicros: 0,
      committed: 0,
      failures: 0,
      confirmMs: new LatencyHistogram(),
      confirmCommitted: 0,
      confirmMissing: 0,
    }));
    const topic = `bench.orm.${schema.slice(-5)}`;
    const messageOf = (entry: Measured, orderId: number): OutboxMessageInput => {
      const n = orderId - entry.index * ORDER_ID_SPAN;
      const workload = { topic, keys: sizes.keys, payloadBytes: sizes.payloadBytes };
      return { topic, type: `${MESSAGE_TYPE}.${entry.slug}`, key: keyOf(n, workload), payload: payloadOf(n, workload) };
    };
    log(`(j) enqueue: ${measured.map((m) => m.path.name).join(', ')}; ${sizes.ormRounds} rounds of ${sizes.ormTransactions} transactions each`);
    await measureEnqueue(new Outbox(enqueueStore), measured, { warmup, rounds: sizes.ormRounds, perRound: sizes.ormTransactions }, messageOf);
    await checkEnqueued(context, schema, measured, warmup + 1 + sizes.ormRounds * sizes.ormTransactions, result);
    log(`(j) commit-to-confirm: ${sizes.ormConfirmSamples} samples per path`);
    await measureConfirm(context, schema, storePool, measured, messageOf, result);
    report(measured, result);
  } finally {
    for (const path of paths) await path.close().catch((error: unknown) => log(`(j) closing ${path.name}: ${errorText(error)}`));
    await storePool.end();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
  result.notes.push(
    "enqueue: only the `outbox.enqueue(handle, message)` call is timed (the adapter call, e.g. `fromKysely(trx)`, included), inside BEGIN; business INSERT through the path's own API; enqueue; COMMIT, one transaction after another on one connection per path; paths interleaved in rounds (each round starts one path later). cpuUs: process CPU (user + system) over the call, per enqueue. The target is judged on the p50 ratio; the mean ratio counts garbage collection and the machine's pauses too.",
    "statements: round trips of one enqueue, counted on the handle. A handle whose driver vouches for the transaction (status `open`: pg's ReadyForQuery status) sends the INSERT alone; one whose ORM cannot tell (status `undefined`) pays one more round trip by design, the store's probe (a transaction-local setting, `set_config('outboxer.in_transaction', …, true)`) that guards the INSERT: such an adapter is not expected to come within 5 % of raw pg. prepared: the store's INSERT is in the connection's pg_prepared_statements (the handle passed the statement's name on to node-postgres; otherwise it is parsed and planned at every enqueue).",
    "confirm: from the transaction's promise resolving (raw: `outbox.transaction(fromPgPool(pool), work)`; ORMs: `outbox.transaction(() => ormTransaction)`) to the relay's `onPublished` for that id (after the RabbitMQ confirm); one message at a time, each confirmed before the next, paths interleaved.",
  );
  return result;
}

type MessageOf = (entry: Measured, orderId: number) => OutboxMessageInput;

async function measureEnqueue(
  outbox: OrmBenchOutbox,
  measured: Measured[],
  counts: { warmup: number; rounds: number; perRound: number },
  messageOf: MessageOf,
): Promise<void> {
  const transact = async (entry: Measured, timed: boolean) => {
    const orderId = entry.index * ORDER_ID_SPAN + entry.committed + entry.failures + 1;
    try {
      await entry.path.transaction(async (scope) => {
        await scope.insertOrder(orderId);
        const message = messageOf(entry, orderId);
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        await outbox.enqueue(scope.handle(), message);
        const elapsed = performance.now() - started;
        const cpu = process.cpuUsage(cpuBefore);
        if (timed) {
          entry.enqueueMs.record(elapsed);
          entry.cpuMicros += cpu.user + cpu.system;
        }
      });
      entry.committed++;
    } catch (error) {
      entry.failures++;
      entry.lastError = errorText(error);
    }
  };
  for (const entry of measured) {
    for (let i = 0; i < counts.warmup; i++) await transact(entry, false);
    await countStatements(outbox, entry, messageOf);
  }
  for (let r = 0; r < counts.rounds; r++) {
    for (let k = 0; k < measured.length; k++) {
      const entry = measured[(r + k) % measured.length] as Measured;
      for (let i = 0; i < counts.perRound; i++) await transact(entry, true);
    }
  }
}

/** One more (untimed) transaction per path whose handle counts the statements the store sends, and says what its status was. */
async function countStatements(outbox: OrmBenchOutbox, entry: Measured, messageOf: MessageOf): Promise<void> {
  const orderId = entry.index * ORDER_ID_SPAN + entry.committed + entry.failures + 1;
  try {
    await entry.path.transaction(async (scope) => {
      await scope.insertOrder(orderId);
      const port = toPgTransaction(scope.handle());
      entry.status = String((await port.status?.()) ?? 'undefined');
      let statements = 0;
      const counting = defineTransaction({
        ...port,
        query: (sql, params, options) => {
          statements++;
          return port.query(sql, params, options);
        },
      });
      await outbox.enqueue(counting, messageOf(entry, orderId));
      entry.statementsPerEnqueue = statements;
      // the store names its INSERT; a handle that passes the name on keeps it prepared on its connection
      const prepared = await port.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO %unnest(%'`, []);
      entry.prepared = Number(prepared.rows[0]?.n ?? 0) > 0;
    });
    entry.committed++;
  } catch (error) {
    entry.failures++;
    entry.lastError = errorText(error);
  }
}

/** Every transaction of the enqueue phase (`expected` a path: warm-up, the counted one, the timed ones) committed with its business row and its message. */
async function checkEnqueued(context: ScenarioContext, schema: string, measured: Measured[], expected: number, result: ScenarioResult): Promise<void> {
  const messages = await context.admin.query<{ type: string; n: number }>(`SELECT type, count(*)::int AS n FROM "${schema}".outbox GROUP BY type`);
  const orders = await context.admin.query<{ path: number; n: number }>(
    `SELECT id / ${ORDER_ID_SPAN} AS path, count(*)::int AS n FROM "${schema}".orders GROUP BY 1`,
  );
  for (const entry of measured) {
    const stored = messages.rows.find((row) => row.type === `${MESSAGE_TYPE}.${entry.slug}`)?.n ?? 0;
    const businessRows = orders.rows.find((row) => Number(row.path) === entry.index)?.n ?? 0;
    result.checks.push({
      name: `${entry.path.name}: every enqueue committed with its business row`,
      ok: entry.failures === 0 && entry.committed === expected && stored === expected && businessRows === expected,
      detail: `${entry.committed}/${expected} committed, ${stored} messages and ${businessRows} orders stored, ${entry.failures} failed${entry.lastError === undefined ? '' : ` (last: ${entry.lastError})`}`,
    });
  }
}

async function measureConfirm(
  context: ScenarioContext,
  schema: string,
  storePool: ReturnType<typeof benchPool>,
  measured: Measured[],
  messageOf: MessageOf,
  result: ScenarioResult,
): Promise<void> {
  const { sizes, admin } = context;
  const broker = await createBrokerTarget('rabbitmq');
  const store = new PostgresOutboxStore(fromPgPool(storePool), { schema, table: 'outbox_confirm' });
  const outbox: OrmBenchOutbox = new Outbox(store);
  const clock = new ConfirmClock();
  try {
    await store.migrate();
    await useEngine(admin, schema, 'outbox_confirm', sizes.engine);
    const topic = broker.topic;
    const relay = outbox.createRelay(broker.publisher(), { ...engineRelayOptions(sizes.engine), hooks: { onPublished: (event) => clock.confirmed(event.id) } });
    relay.start();
    let nextOrder = 0;
    const sample = async (entry: Measured): Promise<number | undefined> => {
      const orderId = entry.index * ORDER_ID_SPAN + ORDER_ID_SPAN / 2 + ++nextOrder;
      let confirmed: Promise<number> | undefined;
      await entry.path.throughOutbox(outbox, async (scope) => {
        await scope.insertOrder(orderId);
        const id = await outbox.enqueue(scope.handle(), { ...messageOf(entry, orderId), topic });
        confirmed = clock.confirmation(id);
      });
      const resolvedAt = performance.now();
      entry.confirmCommitted++;
      const publishedAt = await withinBound(confirmed as Promise<number>);
      return publishedAt === undefined ? undefined : Math.max(0, publishedAt - resolvedAt);
    };
    const attempt = (entry: Measured) =>
      sample(entry).catch((error: unknown) => {
        entry.lastError = errorText(error);
        return undefined;
      });
    for (const entry of measured) await attempt(entry); // warm-up: the relay holds its partitions, the paths their connections
    for (let i = 0; i < sizes.ormConfirmSamples; i++) {
      for (let k = 0; k < measured.length; k++) {
        const entry = measured[(i + k) % measured.length] as Measured;
        const latency = await attempt(entry);
        if (latency === undefined) entry.confirmMissing++;
        else entry.confirmMs.record(latency);
      }
    }
    await outbox.close();
    const committed = measured.reduce((sum, entry) => sum + entry.confirmCommitted, 0);
    const stored = await settle(() => broker.stored(), committed);
    for (const entry of measured) {
      result.checks.push({
        name: `${entry.path.name}: every commit-to-confirm sample confirmed within ${CONFIRM_BOUND_MS} ms`,
        ok: entry.confirmMissing === 0 && entry.confirmMs.count === sizes.ormConfirmSamples,
        detail: `${entry.confirmMs.count}/${sizes.ormConfirmSamples}${entry.lastError === undefined ? '' : ` (last error: ${entry.lastError})`}`,
      });
    }
    result.checks.push({
      name: 'commit-to-confirm: the broker holds every committed message, once',
      ok: stored === committed && clock.confirms === committed,
      detail: `committed ${committed}, published ${clock.confirms}, stored ${stored}`,
    });
  } finally {
    await outbox.close().catch(() => undefined);
    await broker.cleanup();
  }
}

function withinBound(confirmed: Promise<number>): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), CONFIRM_BOUND_MS);
  });
  return Promise.race([confirmed, late]).finally(() => clearTimeout(timer));
}

function report(measured: Measured[], result: ScenarioResult): void {
  const raw = measured[0] as Measured;
  const rawEnqueue = raw.enqueueMs.summary();
  const rawConfirm = raw.confirmMs.summary();
  const rawCpu = raw.cpuMicros / rawEnqueue.count;
  for (const entry of measured) {
    const enqueue = entry.enqueueMs.summary();
    const confirm = entry.confirmMs.summary();
    const cpu = entry.cpuMicros / enqueue.count;
    result.rows.push({
      contender: entry.path.name,
      metrics: {
        enqueueP50Us: round(enqueue.p50 * 1000, 1),
        enqueueMeanUs: round(enqueue.mean * 1000, 1),
        cpuUs: round(cpu, 1),
        p50VsRaw: round(enqueue.p50 / rawEnqueue.p50),
        meanVsRaw: round(enqueue.mean / rawEnqueue.mean),
        cpuVsRaw: round(cpu / rawCpu),
        statements: entry.statementsPerEnqueue ?? null,
        status: entry.status ?? null,
        prepared: entry.prepared ?? null,
        confirmP50Ms: round(confirm.p50),
        confirmP99Ms: round(confirm.p99),
        confirmP50VsRaw: round(confirm.p50 / rawConfirm.p50),
        confirmP99VsRaw: round(confirm.p99 / rawConfirm.p99),
      },
    });
    if (entry === raw) continue;
    result.targets.push(
      target(
        `${entry.path.name}: enqueue time <= ${TARGET_RATIO} x raw pg`,
        `<= ${TARGET_RATIO} (p50 vs raw pg, same run)`,
        round(enqueue.p50 / rawEnqueue.p50),
        (v) => v <= TARGET_RATIO,
      ),
    );
  }
  const probed = measured.filter((entry) => entry.status !== 'open').map((entry) => entry.path.name);
  if (probed.length > 0) result.notes.push(`Probed in the database (status not \`open\`, one more round trip per enqueue, by design): ${probed.join(', ')}.`);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
