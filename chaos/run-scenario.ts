import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import amqp from 'amqplib';
import { TcpProxy } from '../test/support/tcp-proxy.js';
import { check, type ScenarioReport } from './checker.js';
import { fanOutFigures } from './fan-out-figures.js';
import { createEnvironment, SERVICES, type Environment } from './environment.js';
import { FaultLog } from './fault-log.js';
import { countWriterFailures, readCommitTimes, readDatabase, readDeliveries, readIncarnations, scanForCanary } from './gather.js';
import type { LoadName } from './load.js';
import { Prng } from './prng.js';
import { RelaySlot } from './relay-slot.js';
import { readJournal } from './journal.js';
import { ownershipFigures } from './ownership-figures.js';
import { OwnershipSampler } from './ownership-sampler.js';
import { RoleProcess } from './role-process.js';
import type { FaultContext, Scenario } from './scenario.js';
import { resolveSpecs } from './resolve-specs.js';
import { DEFAULT_DESTINATION, ENV_PG_URL, type RelayEngine } from './spec.js';
import { poll } from './poll.js';

const DRAIN_BOUND_MS = 90_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface RunOptions {
  readonly load: LoadName;
  readonly engine: RelayEngine;
}

/** Runs one scenario end to end: environment, roles, fault schedule, drain, check, report files. */
export async function runScenario(scenario: Scenario, seed: number, outRoot: string, options: RunOptions): Promise<ScenarioReport> {
  const started = Date.now();
  const prng = new Prng(`${seed}:${scenario.name}`);
  const { workload, relay } = resolveSpecs(scenario, options.load, options.engine);
  const outDir = join(outRoot, `${scenario.name}-${seed}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const env = await createEnvironment(scenario.name, scenario.broker, workload.keys, scenario.fanOut?.destinations ?? []);
  // fan-out: every destination, `default` first (the writers' route stores one row each, in this order)
  const destinations = scenario.fanOut === undefined ? undefined : env.wiring.map((w) => w.name);
  const log = new FaultLog();
  const slots: RelaySlot[] = [];
  const slotProxies: TcpProxy[] = [];
  let consumer: RoleProcess | undefined;
  let sampler: OwnershipSampler | undefined;
  try {
    const consumerJournal = join(outDir, 'consumer.jsonl');
    consumer = new RoleProcess('consumer', { role: 'consumer', sources: env.wiring, journal: consumerJournal }, env.brokerSecrets('consumer'), outDir);
    const connectedTo = () =>
      new Set(
        readJournal<{ e: string; to?: string }>(consumerJournal)
          .filter((r) => r.e === 'connected')
          .map((r) => r.to ?? DEFAULT_DESTINATION),
      );
    await poll(() => connectedTo().size === env.wiring.length, 30_000, 'the consumer to connect to every destination');
    if (scenario.ownership !== undefined) sampler = await OwnershipSampler.start(env, join(outDir, 'ownership.jsonl'));
    const killPrng = prng.fork('kill-plan');
    for (let index = 0; index < relay.count; index++) {
      const proxy = scenario.privateDatabaseProxies === true ? await TcpProxy.start(env.pgProxy.port) : undefined;
      const brokerProxy = scenario.privateBrokerProxies === true ? await TcpProxy.start(env.brokerProxy.port) : undefined;
      for (const own of [proxy, brokerProxy]) if (own !== undefined) slotProxies.push(own);
      const slot = new RelaySlot(
        index,
        {
          role: 'relay',
          schema: env.schema,
          broker: env.broker,
          exchange: env.exchange,
          relay,
          appPrefix: `chaos-relay-${env.schema}`,
          ...(destinations === undefined ? {} : { destinations: env.destinations.map((d) => d.wiring) }),
        },
        {
          [ENV_PG_URL]: proxy === undefined ? env.urls.relayPg : env.relayPgVia(proxy.port),
          ...env.brokerSecrets('relay', brokerProxy?.port),
        },
        outDir,
        500,
        (incarnation, exit) => {
          if (exit.signal === 'SIGKILL' && readJournal(incarnation.journal).some((r) => r.e === 'kill-point')) {
            log.begin(`kill-point:${incarnation.killPoint?.point ?? '?'}`, { target: incarnation.name });
          }
        },
        (slotIndex, incarnation) => scenario.killPlan?.(killPrng, slotIndex, incarnation),
        proxy,
        brokerProxy,
      );
      slots.push(slot);
      if (index < (scenario.initialRelays ?? relay.count)) slot.start();
    }
    const firstSlots = slots.filter((slot) => slot.incarnations.length > 0);
    await poll(
      () => firstSlots.every((slot) => readJournal(slot.incarnations[0]?.journal ?? '').some((r) => r.e === 'running')),
      30_000,
      'the relays to start',
    );
    const writerJournals = Array.from({ length: workload.writers }, (_, i) => join(outDir, `writer-${i}.jsonl`));
    const writers = writerJournals.map(
      (journal, index) =>
        new RoleProcess(
          `writer-${index}`,
          {
            role: 'writer',
            schema: env.schema,
            topicPrefix: env.topicPrefix,
            lateTopicPrefix: env.lateTopicPrefix,
            seed: prng.fork(`writer-${index}`).int(0, 2 ** 31),
            index,
            workload,
            maxMessageBytes: relay.maxMessageBytes,
            journal,
            ...(destinations === undefined ? {} : { destinations }),
          },
          { [ENV_PG_URL]: env.urls.directPg },
          outDir,
        ),
    );
    let writing = true;
    const writersDone = Promise.all(writers.map((w) => w.exited)).then(() => {
      writing = false;
    });
    const ctx: FaultContext = { prng: prng.fork('faults'), env, slots, log, relay, writing: () => writing, sleep };
    const scheduleStart = Date.now();
    await Promise.all([writersDone, scenario.faults(ctx)]);
    const quiesced = Date.now();
    const drainMs = await drain(env, outDir, consumerJournal, writerJournals, quiesced);
    const samples = await sampler?.stop();
    sampler = undefined;
    await Promise.all(slots.map((slot) => slot.close()));
    await queueEmpty(env);
    await consumer.stop('SIGTERM');
    const database = await readDatabase(env);
    const commitTimes = readCommitTimes(writerJournals);
    const deliveries = readDeliveries(consumerJournal);
    const incarnations = readIncarnations(slots);
    const report = check({
      scenario: scenario.name,
      seed,
      relay,
      ...database,
      commitTimes,
      deliveries,
      incarnations,
      faults: log.records,
      drainMs,
      canaryLeaks: [],
      writerFailures: countWriterFailures(writerJournals),
      ...(destinations === undefined ? {} : { destinations }),
    });
    const targets = typeof scenario.ownership === 'function' ? scenario.ownership(relay) : scenario.ownership;
    const ownership =
      samples === undefined || targets === undefined
        ? undefined
        : ownershipFigures({
            samples,
            incarnations,
            faults: log.records,
            scheduleStart,
            commitTimes,
            firstDelivery: firstDeliveries(deliveries),
            targets,
          });
    const fanOutTargets = scenario.fanOut?.targets;
    const fanOut =
      destinations === undefined || fanOutTargets === undefined
        ? undefined
        : fanOutFigures({
            destinations,
            ledger: database.ledger,
            commitTimes,
            firstDelivery: firstDeliveries(deliveries),
            faults: log.records,
            incarnations,
            targets: fanOutTargets,
          });
    writeFileSync(join(outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    const leaks = scanForCanary(outDir, env.canary);
    const final: ScenarioReport = {
      ...report,
      load: options.load,
      engine: options.engine,
      durationMs: Date.now() - started,
      canaryLeaks: leaks,
      ...(ownership === undefined ? {} : { ownership }),
      ...(fanOut === undefined ? {} : { fanOut }),
      pass: report.pass && leaks.length === 0 && (ownership?.missed.length ?? 0) === 0 && (fanOut?.missed.length ?? 0) === 0,
    };
    writeFileSync(join(outDir, 'report.json'), `${JSON.stringify(final, null, 2)}\n`);
    return final;
  } finally {
    await sampler?.stop();
    await Promise.all(slots.map((slot) => slot.close()));
    await consumer?.stop('SIGTERM');
    await Promise.all(slotProxies.map((proxy) => proxy.close()));
    await env.destroy();
  }
}

/** The first delivery of each id (at any destination: ids are unique across destinations). */
function firstDeliveries(deliveries: readonly { readonly t: number; readonly id: string }[]): Map<string, number> {
  const first = new Map<string, number>();
  for (const d of deliveries) if (!first.has(d.id)) first.set(d.id, d.t);
  return first;
}

/** Waits (bounded) until every committed message is delivered or dead and nothing is pending; null if it never drains. */
async function drain(env: Environment, outDir: string, consumerJournal: string, writerJournals: readonly string[], since: number): Promise<number | null> {
  try {
    await poll(
      async () => {
        const { ledger, outbox } = await readDatabase(env);
        if (outbox.some((row) => row.state === 'pending')) return false;
        const delivered = new Set(readDeliveries(consumerJournal).map((d) => d.id));
        const dead = new Set(outbox.filter((row) => row.state === 'dead').map((row) => row.id));
        return ledger.every((row) => delivered.has(row.id) || dead.has(row.id));
      },
      DRAIN_BOUND_MS,
      'the drain',
      200,
    );
    return Date.now() - since;
  } catch {
    writeFileSync(join(outDir, 'drain-timeout.txt'), `not drained ${DRAIN_BOUND_MS} ms after the faults healed (writers: ${writerJournals.length})\n`);
    return null;
  }
}

/** Bounded wait until the broker holds nothing for the consumer (so late copies are counted), on every RabbitMQ destination. */
async function queueEmpty(env: Environment): Promise<void> {
  const queues = env.wiring.filter((w) => w.broker === 'rabbitmq').map((w) => w.queue);
  if (queues.length === 0) return;
  const connection = await amqp.connect(SERVICES.amqpAdminUrl);
  try {
    const channel = await connection.createChannel();
    for (const queue of queues) {
      await poll(async () => (await channel.checkQueue(queue)).messageCount === 0, 10_000, 'the queue to empty', 100).catch(() => undefined);
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
}
