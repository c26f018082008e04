/**
 * A relay process's memory and CPU on a backlog drain, side by side (issue 23):
 * `node --import tsx scripts/relay-memory.ts <messages> <rounds> <name>=<checkout>[|<node flag>...] ...`, e.g.
 * `... 100000 4 before=/work/wt-before after=.` or `... 100000 4 default=. 'semi8=.|--max-semi-space-size=8'`.
 * Each variant is `outboxer relay` built from its checkout as scenario (l) builds it (bench/support/cli-build.ts: plain
 * JavaScript, node_modules linked), started with its node flags against PostgreSQL and RabbitMQ (`BROKER=nats`:
 * JetStream) with the library's defaults, in ABBA order over the rounds. Per drain, on a fresh table and exchange:
 * the relay starts and takes every partition, the backlog (1,000 keys, ~200-byte JSON) is inserted in one transaction,
 * then COMMIT and a wake-up NOTIFY; measured until the table is empty. Prints per drain and per variant: VmRSS once
 * started, VmHWM (the peak) at the end, the relay process's CPU per message and its PostgreSQL backends' (/proc), and
 * the rate (to the broker holding every message). Wrap it in `flock /tmp/n/bench.lock` on a shared machine.
 */
import pg from 'pg';
import { services } from '../bench/config.js';
import { outboxerContender } from '../bench/contenders/outboxer.js';
import { PostgresCpuMeter } from '../bench/measure/process-cpu.js';
import { brokerFlags } from '../bench/scenarios/scale-out.js';
import { type BrokerKind, createBrokerTarget } from '../bench/support/broker-target.js';
import { buildCli, type CliBuild } from '../bench/support/cli-build.js';
import { HoldingsPoller } from '../bench/support/partition-holdings.js';
import { startNodeProcess } from '../bench/support/relay-processes.js';
import { DEFAULT_WAKE_CHANNEL } from '../src/stores/postgres/index.js';

interface Variant {
  readonly name: string;
  readonly cli: CliBuild;
  readonly nodeFlags: readonly string[];
}

interface DrainMeasure {
  readonly startMb: number;
  readonly peakMb: number;
  readonly relayUsPerMessage: number;
  readonly pgRelayUsPerMessage: number;
  readonly perSecond: number;
}

const messages = Number(process.argv[2]);
const rounds = Number(process.argv[3]);
const specs = process.argv.slice(4);
const broker: BrokerKind = process.env.BROKER === 'nats' ? 'nats' : 'rabbitmq';
if (!(messages > 0) || !(rounds > 0) || specs.length === 0) {
  throw new Error('usage: scripts/relay-memory.ts <messages> <rounds> <name>=<checkout>[|<node flag>...] ...');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function variantOf(spec: string): Variant {
  const equals = spec.indexOf('=');
  if (equals < 1) throw new Error(`${spec}: expected <name>=<checkout>[|<node flag>...]`);
  const [checkout = '.', ...nodeFlags] = spec.slice(equals + 1).split('|');
  return { name: spec.slice(0, equals), cli: buildCli(checkout), nodeFlags };
}

async function drainOnce(admin: pg.Client, meter: PostgresCpuMeter | null, variant: Variant): Promise<DrainMeasure> {
  const target = await createBrokerTarget(broker);
  const contender = outboxerContender({ workload: { topic: target.topic, keys: 1_000, payloadBytes: 200 }, relayConnections: 1 });
  try {
    await contender.setup(admin);
    const args = ['relay', '--database-url', services.postgresUrl, '--schema', contender.schema, '--table', 'outbox', ...brokerFlags(target)];
    const relay = await startNodeProcess([...variant.nodeFlags, variant.cli.main, ...args], '"msg":"outboxer relay starting"', variant.name);
    try {
      const holdings = new HoldingsPoller(admin, contender.schema, 'outbox', 25);
      await holdings.until('the relay holds every partition', (h) => [...h.byRelay.values()].reduce((a, b) => a + b, 0) === h.partitions, 30_000);
      await sleep(500);
      const startMb = relay.memory().rssMb;
      await admin.query('BEGIN');
      await contender.load(admin, 0, messages);
      meter?.start();
      const cpuBefore = relay.cpu();
      await admin.query('COMMIT');
      const begun = performance.now();
      await admin.query('SELECT pg_notify($1, $2)', [DEFAULT_WAKE_CHANNEL, '']);
      while ((await target.stored()) < messages) await sleep(50);
      const seconds = (performance.now() - begun) / 1000;
      while ((await contender.pending(admin)) > 0) await sleep(20);
      const postgres = meter === null ? null : await meter.stop(relay.pid);
      return {
        startMb,
        peakMb: relay.memory().peakMb,
        relayUsPerMessage: (relay.cpu() - cpuBefore) / messages,
        pgRelayUsPerMessage: (postgres?.relayBackends ?? Number.NaN) / messages,
        perSecond: messages / seconds,
      };
    } finally {
      await relay.stop();
    }
  } finally {
    await contender.teardown(admin).catch(() => undefined);
    await target.cleanup().catch(() => undefined);
  }
}

const one = (value: number) => value.toFixed(1);
const variants = specs.map(variantOf);
const admin = new pg.Client({ connectionString: services.postgresUrl });
await admin.connect();
const measures = new Map<string, DrainMeasure[]>(variants.map((v) => [v.name, []]));
try {
  const meter = await PostgresCpuMeter.open(admin);
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const m = await drainOnce(admin, meter, variant);
      measures.get(variant.name)?.push(m);
      console.log(
        `${variant.name} round ${round + 1}: start ${Math.round(m.startMb)} MB, peak ${Math.round(m.peakMb)} MB, relay ${one(m.relayUsPerMessage)} µs/msg, ` +
          `its PostgreSQL backends ${one(m.pgRelayUsPerMessage)} µs/msg, ${Math.round(m.perSecond)}/s`,
      );
    }
  }
} finally {
  for (const variant of variants) variant.cli.remove();
  await admin.end();
}
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
for (const [name, runs] of measures) {
  const list = (pick: (m: DrainMeasure) => number, digits = 0) => runs.map((m) => pick(m).toFixed(digits)).join('/');
  console.log(
    `${name} (${broker}, ${messages} messages): start ${list((m) => m.startMb)} MB; peak ${list((m) => m.peakMb)} MB; ` +
      `relay ${list((m) => m.relayUsPerMessage, 1)} µs/msg (mean ${one(mean(runs.map((m) => m.relayUsPerMessage)))}); ` +
      `PostgreSQL backends mean ${one(mean(runs.map((m) => m.pgRelayUsPerMessage)))} µs/msg; rate ${list((m) => m.perSecond)}/s`,
  );
}
