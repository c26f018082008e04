import type pg from 'pg';
import { DEFAULT_WAKE_CHANNEL } from '../../src/stores/postgres/index.js';
import { services } from '../config.js';
import { IDEAL_BATCH, IDEAL_READY, idealTableSql } from '../contenders/ideal-relay.js';
import { OUTBOXER_RELAY_SETTINGS, outboxerContender } from '../contenders/outboxer.js';
import { pidOf, type PostgresCpu, PostgresCpuMeter, processCpu } from '../measure/process-cpu.js';
import { type BrokerKind, type BrokerTarget, createBrokerTarget } from '../support/broker-target.js';
import { buildCli } from '../support/cli-build.js';
import { bulkLoad, uniqueName } from '../support/database.js';
import { engineCliFlags } from '../support/engine.js';
import { HoldingsPoller } from '../support/partition-holdings.js';
import { type RelayProcess, startNodeProcess, startRelayProcess } from '../support/relay-processes.js';
import { MESSAGE_TYPE, payloadSql, type Workload } from '../support/workload.js';
import { brokerFlags } from './scale-out.js';
import { newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

const SIDES = ['ideal', 'outboxer'] as const;
type Side = (typeof SIDES)[number];
const NAMES: Record<Side, string> = { ideal: 'ideal relay', outboxer: 'outboxer relay (CLI)' };
const BROKER_PROCESS: Record<BrokerKind, string> = { rabbitmq: 'beam.smp', nats: 'nats-server' };
const SAMPLE_MS = 50;

/** A backlog table and the relay process that drains it: one side of (l). */
interface Contestant {
  readonly schema: string;
  setup(admin: pg.Client): Promise<void>;
  load(admin: pg.Client, count: number): Promise<void>;
  pending(admin: pg.Client): Promise<number>;
  /** Starts the relay process and resolves once it is ready to drain (outboxer: holds every partition). */
  start(admin: pg.Client): Promise<RelayProcess>;
  teardown(admin: pg.Client): Promise<void>;
}

interface Drain {
  readonly seconds: number;
  readonly emptySeconds: number;
  readonly stored: number;
  readonly pending: number;
  readonly exitCode: number | null;
  readonly postgres: PostgresCpu | null;
  readonly relayCpu: number;
  readonly brokerCpu: number | null;
  readonly peakRssMb: number;
  readonly note: string;
}

/**
 * (l) Relay floor (issue 23): the same backlog drained by outboxer's relay process (`outboxer relay`, the CLI with
 * the library's defaults) and by the ideal unordered relay (bench/contenders/ideal-relay.ts: reads 1,000 rows by
 * seq while the previous batch publishes, window 256, the broker's own client, `DELETE ... WHERE seq = ANY($1)`; no
 * leases, no order, no fencing), both as processes built from this checkout, in alternating order (ABBA over the
 * rounds). Per drain: the rate (COMMIT of the backlog to the broker holding all of it), then CPU per message from
 * /proc over COMMIT to the table empty, of PostgreSQL (every server process, reaped children included, less the
 * live sessions of others), of the relay process and of the broker process.
 */
export async function relayFloor(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, admin, log } = context;
  const n = sizes.floorMessages;
  const result = newResult('l', `Relay floor: ${n.toLocaleString('en-US')} messages drained by outboxer's relay process and by the ideal unordered relay`, {
    messages: n,
    rounds: sizes.floorRounds,
    keys: sizes.keys,
    payloadBytes: sizes.payloadBytes,
    engine: sizes.engine,
    outboxer: `CLI, library defaults (batch ${OUTBOXER_RELAY_SETTINGS.batchSize}, window ${OUTBOXER_RELAY_SETTINGS.maxInFlight}, lanes ${OUTBOXER_RELAY_SETTINGS.lanes})`,
    ideal: `batch ${IDEAL_BATCH}, window ${OUTBOXER_RELAY_SETTINGS.maxInFlight}, one connection`,
  });
  const meter = await PostgresCpuMeter.open(admin);
  if (meter === null) result.notes.push('PostgreSQL runs out of sight of /proc here (another pid namespace): its CPU is not measured.');
  const cli = buildCli();
  try {
    const idealMain = cli.add('bench/contenders/ideal-relay.ts');
    for (const broker of context.brokers) {
      const drains: Record<Side, Drain[]> = { ideal: [], outboxer: [] };
      for (let r = 0; r < sizes.floorRounds; r++) {
        for (const side of r % 2 === 0 ? SIDES : [...SIDES].reverse()) {
          log(`(l) ${broker}: round ${r + 1}, ${NAMES[side]}, ${n} messages`);
          const drain = await drainOnce(context, broker, side, side === 'ideal' ? idealMain : cli.main, meter);
          drains[side].push(drain);
          const who = `${broker} ${NAMES[side]} round ${r + 1}`;
          result.checks.push({
            name: `${who}: broker holds every message, table empty`,
            ok: drain.stored === n && drain.pending === 0,
            detail: `stored ${drain.stored}/${n}, rows left ${drain.pending}`,
          });
          result.checks.push({ name: `${who}: stopped cleanly`, ok: drain.exitCode === 0, detail: `exit code ${drain.exitCode} ${drain.note}`.trim() });
        }
      }
      report(result, broker, n, drains);
    }
  } finally {
    cli.remove();
  }
  result.notes.push(
    "perSecond: messages over the time from the backlog's COMMIT (with a wake-up NOTIFY) to the broker holding all of them (asked every 50 ms), pooled over the rounds; roundRates: each round's. emptyS: COMMIT to the table empty (the last completion), the CPU window.",
    "CPU per message (µs) from /proc, 10 ms ticks, over COMMIT to table empty: pg = every PostgreSQL process (postmaster, its live children, and the children reaped meanwhile: autovacuum workers, ended sessions) less the live backends of other sessions (other suites share the server; otherSessions counts them) and of the bench; pgRelay = the backends of the relay process's own connections (by client port); pgReaped = the reaped part of pg, which can include other suites' short sessions; relay = the relay process (all threads, start-up excluded: it started before the backlog was committed); broker = beam.smp or nats-server, which other suites may also use.",
    'The ideal relay runs the same transpiled build as the CLI relay (node, no tsx), publishes with the same wire functions (routing key or subject, properties, headers, body bytes) and the same window, and has a table with only its primary key.',
  );
  return result;
}

function report(result: ScenarioResult, broker: BrokerKind, n: number, drains: Record<Side, Drain[]>): void {
  const pooled = (side: Side) => {
    const runs = drains[side];
    const messages = n * runs.length;
    const sum = (pick: (d: Drain) => number | null | undefined) => runs.reduce((total, d) => total + (pick(d) ?? Number.NaN), 0);
    const perMsg = (pick: (d: Drain) => number | null | undefined) => round(sum(pick) / messages, 1);
    return {
      perSecond: Math.round(messages / sum((d) => d.seconds)),
      roundRates: runs.map((d) => Math.round(n / d.seconds)).join(' '),
      emptyS: round(sum((d) => d.emptySeconds) / runs.length),
      pgUsPerMsg: perMsg((d) => d.postgres?.total),
      pgRelayUsPerMsg: perMsg((d) => d.postgres?.relayBackends),
      pgReapedUsPerMsg: perMsg((d) => d.postgres?.reaped),
      relayUsPerMsg: perMsg((d) => d.relayCpu),
      brokerUsPerMsg: perMsg((d) => d.brokerCpu),
      peakRssMb: Math.round(Math.max(...runs.map((d) => d.peakRssMb))),
      otherSessions: Math.max(...runs.map((d) => d.postgres?.otherSessions ?? 0)),
    };
  };
  const ideal = pooled('ideal');
  const ours = pooled('outboxer');
  const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? round(a / b) : null);
  for (const side of SIDES) {
    const m = side === 'ideal' ? ideal : ours;
    result.rows.push({
      contender: NAMES[side],
      broker,
      metrics: {
        ...m,
        rateVsIdeal: ratio(m.perSecond, ideal.perSecond),
        pgVsIdeal: ratio(m.pgUsPerMsg, ideal.pgUsPerMsg),
        pgRelayVsIdeal: ratio(m.pgRelayUsPerMsg, ideal.pgRelayUsPerMsg),
        relayVsIdeal: ratio(m.relayUsPerMsg, ideal.relayUsPerMsg),
        brokerVsIdeal: ratio(m.brokerUsPerMsg, ideal.brokerUsPerMsg),
      },
    });
  }
  result.targets.push(target(`drain ${broker} >= 0.9 x the ideal relay`, '>= 0.9', ratio(ours.perSecond, ideal.perSecond), (v) => v >= 0.9));
  result.targets.push(
    target(`${broker}: PostgreSQL CPU per message <= 2 x the ideal relay's`, '<= 2', ratio(ours.pgUsPerMsg, ideal.pgUsPerMsg), (v) => v <= 2),
  );
  result.targets.push(
    target(`${broker}: relay process CPU per message <= 1.5 x the ideal relay's`, '<= 1.5', ratio(ours.relayUsPerMsg, ideal.relayUsPerMsg), (v) => v <= 1.5),
  );
}

function sideOf(context: ScenarioContext, broker: BrokerKind, side: Side, main: string, target: BrokerTarget, workload: Workload): Contestant {
  const { sizes } = context;
  if (side === 'outboxer') {
    const contender = outboxerContender({ workload, relayConnections: 1 }, { engine: sizes.engine });
    return {
      schema: contender.schema,
      setup: (admin) => contender.setup(admin),
      load: (admin, count) => contender.load(admin, 0, count),
      pending: (admin) => contender.pending(admin),
      async start(admin) {
        const args = [
          '--database-url',
          services.postgresUrl,
          '--schema',
          contender.schema,
          '--table',
          'outbox',
          ...brokerFlags(target),
          ...engineCliFlags(sizes.engine),
        ];
        const relay = await startRelayProcess(main, args);
        const holdings = new HoldingsPoller(admin, contender.schema, 'outbox', 25);
        await holdings.until('the relay holds every partition', (h) => [...h.byRelay.values()].reduce((a, b) => a + b, 0) === h.partitions, 30_000);
        return relay;
      },
      teardown: (admin) => contender.teardown(admin),
    };
  }
  const schema = uniqueName('bench_ideal');
  const table = `"${schema}".outbox`;
  return {
    schema,
    setup: async (admin) => void (await admin.query(idealTableSql(schema))),
    async load(admin, count) {
      // the same rows as outboxer's load: plain SQL, keys round-robin, the same jsonb-built payload text
      await bulkLoad(
        admin,
        count,
        (from, to) => `INSERT INTO ${table} (topic, type, key, payload)
        SELECT '${workload.topic}', '${MESSAGE_TYPE}', 'k-' || (g % ${workload.keys}), ${payloadSql('g', workload)}
        FROM generate_series(${from}, ${to}) g`,
      );
      await admin.query(`ANALYZE ${table}`);
    },
    pending: async (admin) => (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n ?? -1,
    start: () =>
      startNodeProcess(
        [
          main,
          '--database-url',
          services.postgresUrl,
          '--schema',
          schema,
          '--broker',
          broker,
          '--window',
          String(OUTBOXER_RELAY_SETTINGS.maxInFlight),
          ...(broker === 'rabbitmq' ? ['--broker-url', services.amqpUrl, '--exchange', target.resource] : ['--broker-url', services.natsUrl]),
        ],
        IDEAL_READY,
        'ideal relay',
      ),
    teardown: async (admin) => void (await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)),
  };
}

async function waitFor(read: () => Promise<number>, done: (value: number) => boolean, pollMs: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let value = await read();
  while (!done(value) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    value = await read();
  }
  return value;
}

/**
 * One drain on fresh resources: the relay process starts on an empty table (and, for outboxer, takes every
 * partition); the backlog is inserted in one transaction, the CPU counters read, then COMMIT and a wake-up NOTIFY
 * start the clock. Rate: until the broker holds every message; CPU: until the table is empty.
 */
async function drainOnce(context: ScenarioContext, broker: BrokerKind, side: Side, main: string, meter: PostgresCpuMeter | null): Promise<Drain> {
  const { sizes, admin } = context;
  const n = sizes.floorMessages;
  const target = await createBrokerTarget(broker);
  const workload: Workload = { topic: target.topic, keys: sizes.keys, payloadBytes: sizes.payloadBytes };
  const table = sideOf(context, broker, side, main, target, workload);
  const brokerPid = pidOf(BROKER_PROCESS[broker]);
  let relay: RelayProcess | undefined;
  try {
    await table.setup(admin);
    relay = await table.start(admin);
    await admin.query('BEGIN');
    let relayBefore: number;
    let brokerBefore: number;
    let begun: number;
    try {
      await table.load(admin, n);
      meter?.start();
      relayBefore = relay.cpu();
      brokerBefore = brokerPid === undefined ? Number.NaN : processCpu(brokerPid);
      await admin.query('COMMIT');
      begun = performance.now();
    } catch (error) {
      await admin.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    await admin.query('SELECT pg_notify($1, $2)', [DEFAULT_WAKE_CHANNEL, '']);
    const limitMs = Math.max(60_000, n * 2);
    const stored = await waitFor(
      () => target.stored(),
      (v) => v >= n,
      SAMPLE_MS,
      limitMs,
    );
    const seconds = (performance.now() - begun) / 1000;
    const pending = await waitFor(
      () => table.pending(admin),
      (v) => v === 0,
      20,
      30_000,
    );
    const emptySeconds = (performance.now() - begun) / 1000;
    const postgres = meter === null ? null : await meter.stop(relay.pid);
    const relayCpu = relay.cpu() - relayBefore;
    const brokerCpu = brokerPid === undefined ? null : processCpu(brokerPid) - brokerBefore;
    const peakRssMb = relay.memory().peakMb;
    const exitCode = await relay.stop();
    const said = relay
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"msg":"ideal relay st') || line.includes('failed'))
      .slice(-2)
      .join(' ');
    relay = undefined;
    return { seconds, emptySeconds, stored, pending, exitCode, postgres, relayCpu, brokerCpu, peakRssMb, note: exitCode === 0 ? '' : said };
  } finally {
    await relay?.kill().catch(() => undefined);
    await table.teardown(admin).catch(() => undefined);
    await target.cleanup().catch(() => undefined);
  }
}
