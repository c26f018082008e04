import { IDEAL_BATCH, IDEAL_RELAY_FILES } from '../contenders/ideal-relay.js';
import { OUTBOXER_RELAY_SETTINGS } from '../contenders/outboxer.js';
import { pidOf, processCpu } from '../measure/process-cpu.js';
import { type BrokerKind, createBrokerTarget } from '../support/broker-target.js';
import { buildCli } from '../support/cli-build.js';
import type { RelayProcess } from '../support/relay-processes.js';
import type { Workload } from '../support/workload.js';
import { type Drain, FLOOR_SIDES, type FloorDatabase, type FloorDatabaseKind, type FloorSide, floorName, waitFor } from './relay-floor-database.js';
import { mariadbFloor } from './relay-floor-mariadb.js';
import { postgresFloor } from './relay-floor-postgres.js';
import { reportFloor } from './relay-floor-report.js';
import { sqliteFloor } from './relay-floor-sqlite.js';
import { newResult, type ScenarioContext, type ScenarioResult } from './scenario.js';

const BROKER_PROCESS: Record<BrokerKind, string> = { rabbitmq: 'beam.smp', nats: 'nats-server' };
const SAMPLE_MS = 50;

async function openDatabase(kind: FloorDatabaseKind, context: ScenarioContext): Promise<FloorDatabase> {
  if (kind === 'postgres') return postgresFloor(context.admin);
  return kind === 'mariadb' ? mariadbFloor() : sqliteFloor();
}

/**
 * (l) Relay floor (issue 23): the same backlog drained by outboxer's relay process (`outboxer relay`, the CLI with
 * the library's defaults) and by the ideal unordered relay (bench/contenders/ideal-relay.ts: reads 1,000 rows by
 * seq while the previous batch publishes, window 256, the broker's own client, one DELETE per confirmed batch; no
 * leases, no order, no fencing), both as processes built from this checkout, in alternating order (ABBA over the
 * rounds), on each database asked for (`--db`: PostgreSQL, MariaDB, SQLite; each against its own ideal relay).
 * Per drain: the rate (COMMIT of the backlog to the broker holding all of it), then CPU per message from /proc
 * over COMMIT to the table empty, of the database server (relay-floor-<database>.ts), of the relay process and of
 * the broker process.
 */
export async function relayFloor(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, log } = context;
  const n = sizes.floorMessages;
  const labels = [];
  const databases: FloorDatabase[] = [];
  for (const kind of context.databases) databases.push(await openDatabase(kind, context));
  for (const database of databases) labels.push(database.label);
  const result = newResult(
    'l',
    `Relay floor: ${n.toLocaleString('en-US')} messages drained by outboxer's relay process and by the ideal unordered relay (${labels.join(', ')})`,
    {
      messages: n,
      rounds: sizes.floorRounds,
      keys: sizes.keys,
      payloadBytes: sizes.payloadBytes,
      engine: sizes.engine,
      databases: labels.join(', '),
      outboxer: `CLI, library defaults (batch ${OUTBOXER_RELAY_SETTINGS.batchSize}, window ${OUTBOXER_RELAY_SETTINGS.maxInFlight}, lanes ${OUTBOXER_RELAY_SETTINGS.lanes})`,
      ideal: `batch ${IDEAL_BATCH}, window ${OUTBOXER_RELAY_SETTINGS.maxInFlight}, one connection`,
    },
  );
  const cli = buildCli();
  try {
    const [idealMain, ...modules] = IDEAL_RELAY_FILES.map((file) => cli.add(file));
    if (idealMain === undefined || modules.length === 0) throw new Error('the ideal relay was not built');
    for (const database of databases) {
      for (const broker of context.brokers) {
        const drains: Record<FloorSide, Drain[]> = { ideal: [], outboxer: [] };
        for (let r = 0; r < sizes.floorRounds; r++) {
          for (const side of r % 2 === 0 ? FLOOR_SIDES : [...FLOOR_SIDES].reverse()) {
            const name = floorName(side, database);
            log(`(l) ${database.label} ${broker}: round ${r + 1}, ${name}, ${n} messages`);
            const drain = await drainOnce(context, database, broker, side, { cliMain: cli.main, idealMain });
            drains[side].push(drain);
            const who = `${broker} ${name} round ${r + 1}`;
            result.checks.push({
              name: `${who}: broker holds every message, table empty`,
              ok: drain.stored === n && drain.pending === 0,
              detail: `stored ${drain.stored}/${n}, rows left ${drain.pending}`,
            });
            result.checks.push({ name: `${who}: stopped cleanly`, ok: drain.exitCode === 0, detail: `exit code ${drain.exitCode} ${drain.note}`.trim() });
          }
        }
        reportFloor(result, database, broker, n, drains);
      }
    }
  } finally {
    cli.remove();
  }
  result.notes.push(
    "perSecond: messages over the time from the backlog's COMMIT to the broker holding all of them (asked every 50 ms), pooled over the rounds; roundRates: each round's; firstS: COMMIT to the broker's first message (the relay's wake-up: a NOTIFY on PostgreSQL, polling elsewhere); afterFirstPerSecond: the rate from that first message on. emptyS: COMMIT to the table empty (the last completion), the CPU window.",
    'CPU per message (µs) from /proc, 10 ms ticks, over COMMIT to table empty: relay = the relay process (all threads, start-up excluded: it started before the backlog was committed); broker = beam.smp or nats-server, which other suites may also use; the database server as each database says below.',
    'The ideal relay runs the same transpiled build as the CLI relay (node, no tsx), publishes with the same wire functions (routing key or subject, properties, headers, body bytes) and the same window, and has a table with only its primary key.',
    ...databases.flatMap((database) => database.notes),
  );
  return result;
}

/**
 * One drain on fresh resources: the relay process starts on an empty table (and, for outboxer, takes every
 * partition); the backlog is inserted in one transaction, the CPU counters read, then COMMIT starts the clock.
 * Rate: until the broker holds every message; CPU: until the table is empty.
 */
async function drainOnce(
  context: ScenarioContext,
  database: FloorDatabase,
  broker: BrokerKind,
  side: FloorSide,
  mains: { cliMain: string; idealMain: string },
): Promise<Drain> {
  const { sizes } = context;
  const n = sizes.floorMessages;
  const target = await createBrokerTarget(broker);
  const workload: Workload = { topic: target.topic, keys: sizes.keys, payloadBytes: sizes.payloadBytes };
  const table = database.contestant(side, { sizes, ...mains, target, workload });
  const brokerPid = pidOf(BROKER_PROCESS[broker]);
  const meter = database.meter;
  let relay: RelayProcess | undefined;
  try {
    await table.setup();
    relay = await table.start();
    const running = relay;
    let relayBefore = Number.NaN;
    let brokerBefore = Number.NaN;
    const begun = await table.commitBacklog(n, async () => {
      await meter?.start();
      relayBefore = running.cpu();
      brokerBefore = brokerPid === undefined ? Number.NaN : processCpu(brokerPid);
    });
    const limitMs = Math.max(60_000, n * 2);
    let firstSeconds = Number.NaN;
    const stored = await waitFor(
      async () => {
        const held = await target.stored();
        if (held > 0 && Number.isNaN(firstSeconds)) firstSeconds = (performance.now() - begun) / 1000;
        return held;
      },
      (v) => v >= n,
      SAMPLE_MS,
      limitMs,
    );
    const seconds = (performance.now() - begun) / 1000;
    const pending = await waitFor(
      () => table.pending(),
      (v) => v === 0,
      20,
      30_000,
    );
    const emptySeconds = (performance.now() - begun) / 1000;
    const databaseCpu = meter === null ? null : await meter.stop(relay.pid);
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
    return {
      seconds,
      firstSeconds,
      emptySeconds,
      stored,
      pending,
      exitCode,
      database: databaseCpu,
      relayCpu,
      brokerCpu,
      peakRssMb,
      note: exitCode === 0 ? '' : said,
    };
  } finally {
    await relay?.kill().catch(() => undefined);
    await table.teardown().catch(() => undefined);
    await target.cleanup().catch(() => undefined);
  }
}
