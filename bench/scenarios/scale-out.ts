import { DEFAULT_WAKE_CHANNEL } from '../../src/stores/postgres/index.js';
import { services } from '../config.js';
import { OUTBOXER_RELAY_SETTINGS, outboxerContender } from '../contenders/outboxer.js';
import { type BrokerKind, type BrokerTarget, createBrokerTarget } from '../support/broker-target.js';
import { buildCli } from '../support/cli-build.js';
import { engineCliFlags } from '../support/engine.js';
import { type RelayProcess, startRelayProcess } from '../support/relay-processes.js';
import { measureCeiling } from './ceiling-run.js';
import { newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

/** How often the broker is asked how many messages it holds while the relays drain. */
const SAMPLE_MS = 50;
const PEAK_RSS_TARGET_MB = 150;

/**
 * (g) Scale-out: one backlog drained by 1, 2, 4 `outboxer relay` processes (the CLI, as a deployment runs
 * it), each run on a fresh table. The relays start first, on an empty table; the backlog is then committed in
 * one transaction and a wake-up sent, so every relay is up when the clock starts (at that COMMIT) and process
 * start-up is not timed. Done when the broker holds every message. Each relay's peak resident memory (VmHWM)
 * is read before it is stopped.
 */
export async function scaleOut(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes } = context;
  const n = sizes.scaleMessages;
  const result = newResult('g', `Scale-out: ${n.toLocaleString('en-US')} messages drained by ${sizes.scaleRelays.join(', ')} relay processes`, {
    messages: n,
    relayProcesses: sizes.scaleRelays.join(', '),
    engine: sizes.engine,
    process: 'outboxer relay CLI (node, transpiled src), library defaults',
    window: OUTBOXER_RELAY_SETTINGS.maxInFlight,
    keys: sizes.keys,
    payloadBytes: sizes.payloadBytes,
  });
  const cli = buildCli();
  try {
    for (const broker of context.brokers) await brokerRuns(context, broker, cli.main, result);
  } finally {
    cli.remove();
  }
  result.notes.push('peakRssMb: the largest VmHWM among the relay processes; startRssMb: the largest VmRSS once they had started.');
  return result;
}

async function brokerRuns(context: ScenarioContext, broker: BrokerKind, main: string, result: ScenarioResult): Promise<void> {
  const { sizes, log } = context;
  const n = sizes.scaleMessages;
  const window = OUTBOXER_RELAY_SETTINGS.maxInFlight;
  log(`(g) ${broker}: broker ceiling, ${n} messages`);
  const ceiling = await measureCeiling(broker, { keys: sizes.keys, payloadBytes: sizes.payloadBytes }, n, window);
  result.rows.push({
    contender: 'broker ceiling',
    broker,
    metrics: { confirmed: ceiling.confirmed, seconds: round(ceiling.seconds), perSecond: Math.round(ceiling.perSecond), vsCeiling: 1 },
  });
  result.checks.push({ name: `${broker} ceiling stored all`, ok: ceiling.stored === n, detail: `${ceiling.stored}/${n}` });
  let oneRelay = Number.NaN;
  for (const processes of sizes.scaleRelays) {
    log(`(g) ${broker}: ${processes} relay process(es), ${n} messages`);
    const run = await drainWith(context, broker, main, processes, n);
    if (processes === 1) oneRelay = run.perSecond;
    const peakMb = Math.max(...run.peakMb);
    result.rows.push({
      contender: `outboxer relay x${processes}`,
      broker,
      metrics: {
        relays: processes,
        confirmed: run.stored,
        seconds: round(run.seconds),
        perSecond: Math.round(run.perSecond),
        vs1Relay: round(run.perSecond / oneRelay),
        vsCeiling: round(run.perSecond / ceiling.perSecond),
        peakRssMb: Math.round(peakMb),
        startRssMb: Math.round(Math.max(...run.startMb)),
      },
    });
    const who = `${broker} x${processes}`;
    result.checks.push({
      name: `${who}: broker holds every message, none pending`,
      ok: run.drained && run.stored === n && run.pending === 0,
      detail: `stored ${run.stored}/${n}, pending rows ${run.pending}`,
    });
    result.checks.push({
      name: `${who}: every relay's memory read`,
      ok: run.peakMb.every((mb, i) => Number.isFinite(mb) && mb >= (run.startMb[i] ?? Number.NaN)),
      detail: `peak ${run.peakMb.map(Math.round).join(', ')} MB, at start ${run.startMb.map(Math.round).join(', ')} MB`,
    });
    result.checks.push({
      name: `${who}: every relay stopped cleanly`,
      ok: run.exitCodes.every((code) => code === 0),
      detail: `exit codes ${run.exitCodes.join(', ')}`,
    });
    if (processes === 1)
      result.targets.push(
        target(
          `${broker} relay peak RSS during a ${n.toLocaleString('en-US')} drain <= ${PEAK_RSS_TARGET_MB} MB`,
          `<= ${PEAK_RSS_TARGET_MB} MB (1M drain)`,
          Math.round(peakMb),
          (v) => v <= PEAK_RSS_TARGET_MB,
        ),
      );
  }
}

interface ProcessDrain {
  readonly drained: boolean;
  readonly seconds: number;
  readonly perSecond: number;
  readonly stored: number;
  readonly pending: number;
  readonly startMb: number[];
  readonly peakMb: number[];
  readonly exitCodes: (number | null)[];
}

export function brokerFlags(target: BrokerTarget): string[] {
  return target.kind === 'rabbitmq'
    ? ['--publisher', 'rabbitmq', '--broker-url', services.amqpUrl, '--exchange', target.resource]
    : ['--publisher', 'nats', '--broker-url', services.natsUrl];
}

async function drainWith(context: ScenarioContext, broker: BrokerKind, main: string, processes: number, n: number): Promise<ProcessDrain> {
  const { sizes, admin } = context;
  const target = await createBrokerTarget(broker);
  const contender = outboxerContender(
    { workload: { topic: target.topic, keys: sizes.keys, payloadBytes: sizes.payloadBytes }, relayConnections: 1 },
    { engine: sizes.engine },
  );
  const relays: RelayProcess[] = [];
  try {
    await contender.setup(admin);
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
    const started = await Promise.allSettled(Array.from({ length: processes }, () => startRelayProcess(main, args)));
    for (const outcome of started) if (outcome.status === 'fulfilled') relays.push(outcome.value);
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const startMb = relays.map((relay) => relay.memory().rssMb);
    await admin.query('BEGIN');
    try {
      await contender.load(admin, 0, n);
      await admin.query('COMMIT');
    } catch (error) {
      await admin.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    const begun = performance.now();
    await admin.query('SELECT pg_notify($1, $2)', [DEFAULT_WAKE_CHANNEL, '']);
    const deadline = begun + Math.max(60_000, n * 2);
    let stored = await target.stored();
    while (stored < n && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
      stored = await target.stored();
    }
    const seconds = (performance.now() - begun) / 1000;
    const peakMb = relays.map((relay) => relay.memory().peakMb);
    const exitCodes = await Promise.all(relays.map((relay) => relay.stop()));
    const pending = await contender.pending(admin);
    return { drained: stored >= n, seconds, perSecond: stored / seconds, stored, pending, startMb, peakMb, exitCodes };
  } finally {
    await Promise.all(relays.map((relay) => relay.stop()));
    await contender.teardown(admin).catch(() => undefined);
    await target.cleanup().catch(() => undefined);
  }
}
