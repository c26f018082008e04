import { resolveWebhookPublisherOptions } from '../../src/brokers/webhook/index.js';
import { OUTBOXER_RELAY_SETTINGS, outboxerContender } from '../contenders/outboxer.js';
import { mqttOwnClient, type OwnClientRun, redisOwnClient, webhookOwnClient } from '../contenders/own-clients.js';
import { publisherOnly } from '../contenders/publisher-only.js';
import { ConfirmClock } from '../measure/confirm-clock.js';
import { KeyOrderWatch } from '../measure/key-order.js';
import { benchSecret, cpuMeter, createPublisherTarget, PUBLISHER_KINDS, type PublisherKind, type PublisherTarget } from '../support/publisher-targets.js';
import type { Workload } from '../support/workload.js';
import { settle } from './relay-session.js';
import { newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

const RELAY_CONNECTIONS = 8;
const OWN_CLIENT: Record<PublisherKind, { name: string; run: typeof redisOwnClient }> = {
  redis: { name: 'node-redis XADD (own client)', run: redisOwnClient },
  mqtt: { name: 'MQTT.js QoS 1 (own client)', run: mqttOwnClient },
  webhook: { name: 'node:http POST (own client)', run: webhookOwnClient },
};

/** The in-flight window each side keeps: the relay's maxInFlight, or the publisher's own bound where it is lower. */
function windowOf(kind: PublisherKind): number {
  if (kind !== 'webhook') return OUTBOXER_RELAY_SETTINGS.maxInFlight; // MQTT: further capped by the broker's Receive Maximum, on both sides
  return resolveWebhookPublisherOptions({ url: 'http://127.0.0.1/', secret: benchSecret() }).maxConcurrencyPerEndpoint;
}

/** `BENCH_PUBLISHERS=redis,mqtt` narrows the publishers (default: all three). */
function chosenKinds(): PublisherKind[] {
  const asked = process.env.BENCH_PUBLISHERS;
  if (asked === undefined || asked === '') return [...PUBLISHER_KINDS];
  const kinds = asked.split(',');
  for (const kind of kinds)
    if (!PUBLISHER_KINDS.includes(kind as PublisherKind)) throw new Error(`BENCH_PUBLISHERS: unknown ${kind}; known: ${PUBLISHER_KINDS.join(', ')}`);
  return kinds as PublisherKind[];
}

interface Measured {
  readonly confirmed: number;
  readonly seconds: number;
  readonly benchCpu: number;
  readonly serverCpu: number;
  readonly dbCpu?: number;
}

/** Runs `work` with fresh destination resources, timing the bench process's and the receiving server's CPU. */
async function onTarget(
  kind: PublisherKind,
  work: (target: PublisherTarget) => Promise<{ confirmed: number; seconds: number; dbCpu?: number }>,
): Promise<Measured & { stored: number | undefined }> {
  const target = await createPublisherTarget(kind);
  try {
    const server = cpuMeter(async () => (target.serverPid === undefined ? [] : [target.serverPid]));
    await server.start();
    const bench = process.cpuUsage();
    const run = await work(target);
    const used = process.cpuUsage(bench);
    const serverCpu = await server.stop();
    const stored = (await target.stored()) === undefined ? undefined : await settle(async () => (await target.stored()) ?? 0, run.confirmed);
    return { ...run, benchCpu: used.user + used.system, serverCpu, stored };
  } finally {
    await target.cleanup();
  }
}

/**
 * (k) Drain through the publishers of issue 21 (Redis Streams, MQTT, webhook), each beside that broker's own client
 * in the same run, as (a) does for RabbitMQ and NATS: the own client publishing the same messages with the same
 * confirmation and window and no database (ratio 1), outboxer's publisher alone, and outboxer's relay draining a
 * PostgreSQL backlog. CPU per message of each process: this one (client, publisher, relay), the receiving server,
 * and for the relay the PostgreSQL backends of its pool.
 */
export async function publisherDrain(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, admin, log } = context;
  const n = sizes.publisherMessages;
  const kinds = chosenKinds();
  const result = newResult('k', `Drain of ${n.toLocaleString('en-US')} messages through the Redis Streams, MQTT and webhook publishers`, {
    messages: n,
    publishers: kinds.join(' '),
    relayWindow: OUTBOXER_RELAY_SETTINGS.maxInFlight,
    relayBatch: OUTBOXER_RELAY_SETTINGS.batchSize,
    keys: sizes.keys,
    payloadBytes: sizes.payloadBytes,
    relayConnections: RELAY_CONNECTIONS,
  });
  for (const kind of kinds) {
    const shape = { keys: sizes.keys, payloadBytes: sizes.payloadBytes };
    const window = windowOf(kind);
    const own = OWN_CLIENT[kind];
    const rows: { name: string; measured: Measured; window: number | string; keyOrderViolations?: number; failures?: number }[] = [];
    const check = (name: string, stored: number | undefined, confirmed: number) =>
      result.checks.push({
        name: `${kind} ${name}: ${stored === undefined ? 'every publish confirmed (nothing is kept without a subscriber)' : 'destination holds every confirmed message'}`,
        ok: confirmed === n && (stored === undefined || stored === confirmed),
        detail: `confirmed ${confirmed}/${n}, stored ${stored ?? 'n/a'}`,
      });

    // Untimed warm-up of both sides (JIT, connections' first use), so the first row timed is not the coldest.
    const warm = Math.min(2_000, n);
    await onTarget(kind, (t) => own.run(t, { topic: t.topic, ...shape }, warm, window));
    await onTarget(kind, (t) => publisherOnly(t.publisher(), { topic: t.topic, ...shape }, warm, window));
    log(`(k) ${kind}: ${own.name}, ${n} messages`);
    let ownRun: OwnClientRun | undefined;
    const ceiling = await onTarget(kind, async (t) => (ownRun = await own.run(t, { topic: t.topic, ...shape }, n, window)));
    rows.push({ name: own.name, measured: ceiling, window: ownRun?.window ?? window });
    check(own.name, ceiling.stored, ceiling.confirmed);

    log(`(k) ${kind}: library publisher alone, ${n} messages`);
    const alone = await onTarget(kind, (t) => publisherOnly(t.publisher(), { topic: t.topic, ...shape }, n, window));
    rows.push({ name: 'outboxer publisher, no DB', measured: alone, window: kind === 'mqtt' ? 'Receive Maximum' : window });
    check('publisher alone', alone.stored, alone.confirmed);

    log(`(k) ${kind}: outboxer relay, ${n} messages from PostgreSQL`);
    const clock = new ConfirmClock();
    const order = new KeyOrderWatch();
    const relay = await onTarget(kind, async (t) => {
      const workload: Workload = { topic: t.topic, ...shape };
      const contender = outboxerContender({ workload, relayConnections: RELAY_CONNECTIONS }, { engine: sizes.engine });
      try {
        await contender.setup(admin);
        await contender.load(admin, 0, n);
        const backends = cpuMeter(async () =>
          (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [contender.appName])).rows.map((r) => r.pid),
        );
        await backends.start();
        const started = performance.now();
        await contender.start(order.wrap(clock.wrap(t.publisher())));
        const drained = await clock.reach(n, Math.max(120_000, 2 * n));
        const seconds = (performance.now() - started) / 1000;
        const dbCpu = await backends.stop();
        await contender.stop();
        const pending = await contender.pending(admin);
        result.checks.push({
          name: `${kind} outboxer: drained all`,
          ok: drained && pending === 0 && clock.confirms === n,
          detail: `confirmed ${clock.confirms}/${n}, pending ${pending}, failures ${clock.failures} ${clock.lastError ?? ''}`.trim(),
        });
        return { confirmed: clock.confirms, seconds, dbCpu };
      } finally {
        await contender.teardown(admin).catch(() => undefined);
      }
    });
    rows.push({
      name: 'outboxer',
      measured: relay,
      window: kind === 'mqtt' ? 'Receive Maximum' : window,
      keyOrderViolations: order.violations,
      failures: clock.failures,
    });
    check('outboxer', relay.stored, relay.confirmed);
    result.checks.push({ name: `${kind} outboxer: per-key order kept`, ok: order.violations === 0, detail: `${order.violations} publishes out of key order` });

    const ownRate = ceiling.confirmed / ceiling.seconds;
    const ownCpu = ceiling.benchCpu / ceiling.confirmed;
    for (const row of rows) {
      const m = row.measured;
      const rate = m.confirmed / m.seconds;
      const cpu = m.benchCpu / m.confirmed;
      result.rows.push({
        contender: row.name,
        broker: kind,
        metrics: {
          confirmed: m.confirmed,
          seconds: round(m.seconds),
          perSecond: Math.round(rate),
          ratio: round(rate / ownRate),
          window: row.window,
          nodeCpuUsPerMsg: round(cpu, 1),
          nodeCpuVsOwn: round(cpu / ownCpu),
          serverCpuUsPerMsg: round(m.serverCpu / m.confirmed, 1),
          dbCpuUsPerMsg: m.dbCpu === undefined ? null : round(m.dbCpu / m.confirmed, 1),
          ...(row.keyOrderViolations === undefined ? {} : { keyOrderViolations: row.keyOrderViolations, failures: row.failures ?? 0 }),
        },
      });
    }
    const relayRatio = round(relay.confirmed / relay.seconds / ownRate);
    result.targets.push(target(`drain ${kind} >= 0.9 x its own client`, '>= 0.9', relayRatio, (v) => v >= 0.9));
  }
  result.notes.push(
    "ratio: messages/s over the own client's in the same run (1 = the broker's own client, same messages, confirmation and window, no database).",
    "nodeCpuUsPerMsg: this process's CPU (user + system) per message over the run: the client, or the publisher, or relay + publisher + pg driver; serverCpuUsPerMsg: the receiving process (redis-server, mosquitto, the webhook receiver: a node:http child that answers 204 and does not verify signatures), from /proc, 10 ms ticks; dbCpuUsPerMsg: the PostgreSQL backends of the relay's pool.",
    "MQTT: nobody subscribes while measuring (Mosquitto answers PUBACK 0x10 and keeps nothing), so the count is the PUBACKs; both sides keep to the broker's Receive Maximum (Mosquitto: 20). Webhook: both sides 16 requests in flight (maxConcurrencyPerEndpoint), keep-alive, signed. Pub/Sub and SQS/SNS run on emulators only and are not benched.",
  );
  return result;
}
