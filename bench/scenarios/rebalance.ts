import type pg from 'pg';
import { services } from '../config.js';
import { outboxerContender } from '../contenders/outboxer.js';
import { auditDeliveries } from '../measure/first-deliveries.js';
import { LatencyHistogram } from '../measure/latency-histogram.js';
import { createBrokerTarget } from '../support/broker-target.js';
import { buildCli } from '../support/cli-build.js';
import { adminClient } from '../support/database.js';
import { fairlySplit, type Holdings, HoldingsPoller } from '../support/partition-holdings.js';
import { captureRabbitMq, type RabbitMqCapture } from '../support/rabbitmq-capture.js';
import { type RelayProcess, startRelayProcess } from '../support/relay-processes.js';
import { TrickleWriter } from '../support/trickle-writer.js';
import { settle } from './relay-session.js';
import { newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

/** Short, so that a round takes seconds; the publish timeout is the most the relay accepts with it (lease / 3). */
const LEASE_MS = 3_000;
const PUBLISH_TIMEOUT_MS = 1_000;
/** How often the lease tables are read: the resolution of every time measured here. */
const POLL_MS = 25;
/** The trickle: 50 messages/s over 32 keys, so each key has messages before and after every move. */
const TRICKLE = { intervalMs: 20, keys: 32 };
const WAIT_MS = 10 * LEASE_MS;
const INCUMBENT = 'bench-rebalance-a';
const DEATH_GOAL_LEASES = 4 / 3;

/**
 * (i) Rebalance: `outboxer relay` processes (the CLI, engine v2, `--lease-ms 3000`) on one table, RabbitMQ.
 * Relay A starts alone and takes every partition; then, each round: B starts (join: from B's ready log line
 * until A and B hold half each), B is SIGKILLed (death: from the kill until A holds all), C starts and, once the
 * split is fair again (a second join), is SIGTERMed (leave: from the signal until A holds all). Holdings are
 * read from `outbox_partitions` joined to `outbox_relays` (owner names) every 25 ms. A dead relay's partitions
 * can only move once its lease expired: 2/3 to 1 lease after the kill (its last beat is at most lease/3 old).
 * B reaches the fair split on a beat and is killed at once, so its lease is nearly whole: the death time is
 * close to that worst case. The death target allows one beat interval on top of it, lease + lease/3; the time
 * from the expiry (B's `expires_at`, read right after the kill) to the takeover is reported beside it.
 * A trickle of messages runs throughout; at the end the queue must hold every one, the first delivery of each
 * in key order.
 */
export async function rebalance(context: ScenarioContext): Promise<ScenarioResult> {
  const rounds = context.sizes.rebalanceRounds;
  const result = newResult('i', `Rebalance: a relay joins, dies and leaves, ${rounds} rounds, lease ${LEASE_MS} ms`, {
    rounds,
    leaseMs: LEASE_MS,
    publishTimeoutMs: PUBLISH_TIMEOUT_MS,
    pollMs: POLL_MS,
    broker: 'rabbitmq',
    process: 'outboxer relay CLI (node, transpiled src), engine v2, library defaults otherwise',
    trickle: `${1000 / TRICKLE.intervalMs} messages/s over ${TRICKLE.keys} keys`,
  });
  if (!context.brokers.includes('rabbitmq')) {
    result.notes.push('Not run: it publishes to RabbitMQ, which --broker left out.');
    return result;
  }
  const cli = buildCli();
  try {
    await measure(context, cli.main, result);
  } finally {
    cli.remove();
  }
  result.notes.push(
    `Times in ms and in leases (${LEASE_MS} ms); each is found by a read of the lease tables every ${POLL_MS} ms, so it is late by up to one poll and a round trip.`,
    "join: from the new relay's ready log line (just before it starts) until each relay holds half the partitions; one per B and one per C. death: from SIGKILL until the survivor holds all; afterExpiry: from the dead relay's expires_at (database clock, read right after the kill) to that moment. leave: from SIGTERM until the survivor holds all.",
    'trickle: messages committed one by one while the partitions move; delivered counts distinct messages, duplicates the redeliveries (at-least-once after a kill), keyOrderViolations first deliveries after a later message of their key.',
  );
  return result;
}

function timeRow(kind: string, histogram: LatencyHistogram, extra: Record<string, number> = {}) {
  const { count, p50, max } = histogram.summary();
  return {
    contender: kind,
    metrics: { samples: count, p50Ms: Math.round(p50), maxMs: Math.round(max), p50Leases: round(p50 / LEASE_MS), maxLeases: round(max / LEASE_MS), ...extra },
  };
}

/** Milliseconds until `name`'s relays row expires, on the database clock. */
async function leaseLeftMs(admin: pg.Client, schema: string, name: string): Promise<number> {
  const { rows } = await admin.query<{ ms: number }>(
    `SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::float8 AS ms FROM "${schema}".outbox_relays WHERE name = $1`,
    [name],
  );
  if (rows[0] === undefined) throw new Error(`${name} has no relays row right after its kill`);
  return rows[0].ms;
}

async function relayIdOf(admin: pg.Client, schema: string, name: string): Promise<string | undefined> {
  const { rows } = await admin.query<{ relay_id: string }>(`SELECT relay_id FROM "${schema}".outbox_relays WHERE name = $1`, [name]);
  return rows[0]?.relay_id;
}

interface Moves {
  readonly joins: LatencyHistogram;
  readonly deaths: LatencyHistogram;
  /** Per death: from the dead relay's expires_at to the takeover. */
  readonly afterExpiry: LatencyHistogram;
  readonly leaves: LatencyHistogram;
  /** Exit codes of the relays stopped by SIGTERM (the leaving ones). */
  readonly leaveExits: (number | null)[];
}

/** The rounds: B joins and is killed, C joins and leaves; `start` starts a relay process by name. */
async function timeMoves(context: ScenarioContext, schema: string, poller: HoldingsPoller, start: (name: string) => Promise<RelayProcess>): Promise<Moves> {
  const { admin, log, sizes } = context;
  const moves: Moves = {
    joins: new LatencyHistogram(),
    deaths: new LatencyHistogram(),
    afterExpiry: new LatencyHistogram(),
    leaves: new LatencyHistogram(),
    leaveExits: [],
  };
  const alone = (holdings: Holdings) => fairlySplit(holdings, [INCUMBENT]);
  const joined = async (name: string) => {
    const relay = await start(name);
    moves.joins.record((await poller.until(`${name} joined`, (h) => fairlySplit(h, [INCUMBENT, name]), WAIT_MS)) - relay.readyAt);
    return relay;
  };
  for (let i = 1; i <= sizes.rebalanceRounds; i++) {
    log(`(i) round ${i}/${sizes.rebalanceRounds}: join, death, join, leave`);
    const dying = `bench-rebalance-b${i}`;
    const b = await joined(dying);
    const killedAt = performance.now();
    await b.kill();
    const expiresAt = performance.now() + (await leaseLeftMs(admin, schema, dying));
    const takenOver = await poller.until(`${dying}'s partitions taken over`, alone, WAIT_MS);
    moves.deaths.record(takenOver - killedAt);
    moves.afterExpiry.record(takenOver - expiresAt);
    const leaving = `bench-rebalance-c${i}`;
    const c = await joined(leaving);
    const stoppedAt = performance.now();
    const exit = c.stop();
    moves.leaves.record((await poller.until(`${leaving}'s partitions taken back`, alone, WAIT_MS)) - stoppedAt);
    moves.leaveExits.push(await exit);
  }
  return moves;
}

async function measure(context: ScenarioContext, main: string, result: ScenarioResult): Promise<void> {
  const { admin } = context;
  const broker = await createBrokerTarget('rabbitmq');
  const contender = outboxerContender({ workload: { topic: broker.topic, keys: TRICKLE.keys, payloadBytes: 0 }, relayConnections: 1 });
  const { schema } = contender;
  const relays: RelayProcess[] = [];
  const writerClient = await adminClient('bench-trickle');
  const trickle = new TrickleWriter(writerClient, schema, 'outbox', { topic: broker.topic, ...TRICKLE });
  let capture: RabbitMqCapture | undefined;
  try {
    await contender.setup(admin);
    capture = await captureRabbitMq(broker.resource, broker.topic);
    const poller = new HoldingsPoller(admin, schema, 'outbox', POLL_MS);
    const start = async (name: string) => {
      const relay = await startRelayProcess(main, [
        '--database-url',
        services.postgresUrl,
        '--schema',
        schema,
        '--table',
        'outbox',
        '--publisher',
        'rabbitmq',
        '--broker-url',
        services.amqpUrl,
        '--exchange',
        broker.resource,
        '--owner',
        name,
        '--lease-ms',
        String(LEASE_MS),
        '--publish-timeout-ms',
        String(PUBLISH_TIMEOUT_MS),
      ]);
      relays.push(relay);
      return relay;
    };
    const incumbent = await start(INCUMBENT);
    await poller.until(`${INCUMBENT} alone holds every partition`, (h) => fairlySplit(h, [INCUMBENT]), WAIT_MS);
    const incumbentId = await relayIdOf(admin, schema, INCUMBENT);
    trickle.start();
    const moves = await timeMoves(context, schema, poller, start);
    const written = await trickle.stop();
    const pending = await settle(() => contender.pending(admin), 0, WAIT_MS);
    const incumbentKept = incumbentId !== undefined && (await relayIdOf(admin, schema, INCUMBENT)) === incumbentId;
    const exits = [...moves.leaveExits, await incumbent.stop()];
    const audit = auditDeliveries(await capture.takeAll(), written);

    const [join, death, leave] = [timeRow('join', moves.joins), timeRow('death (SIGKILL)', moves.deaths), timeRow('leave (SIGTERM)', moves.leaves)];
    const afterExpiry = moves.afterExpiry.summary();
    result.rows.push(
      join,
      { ...death, metrics: { ...death.metrics, afterExpiryP50Ms: Math.round(afterExpiry.p50), afterExpiryMaxMs: Math.round(afterExpiry.max) } },
      leave,
    );
    result.rows.push({
      contender: 'trickle',
      metrics: { written, delivered: written - audit.missing, duplicates: audit.duplicates, keyOrderViolations: audit.keyOrderViolations },
    });
    result.targets.push(
      target('join: rebalanced within one lease of the joiner starting (max)', '<= 1 lease', join.metrics.maxLeases, (v) => v <= 1),
      target(
        'death: taken over within lease + lease/3 of the kill (max)',
        `<= ${round(DEATH_GOAL_LEASES)} lease`,
        death.metrics.maxLeases,
        (v) => v <= DEATH_GOAL_LEASES,
      ),
      target('leave: taken back within one lease of SIGTERM (max)', '<= 1 lease', leave.metrics.maxLeases, (v) => v <= 1),
    );
    const n = context.sizes.rebalanceRounds;
    result.checks.push(
      {
        name: 'every move timed',
        ok: moves.joins.count === 2 * n && moves.deaths.count === n && moves.leaves.count === n,
        detail: `${moves.joins.count} joins, ${moves.deaths.count} deaths, ${moves.leaves.count} leaves in ${n} rounds`,
      },
      {
        name: `${INCUMBENT} kept one relay id (never lapsed, never reaped)`,
        ok: incumbentKept,
        detail: incumbentKept ? 'the same id at the end' : 'another id, or none, at the end',
      },
      { name: 'every relay stopped by SIGTERM exited cleanly', ok: exits.every((code) => code === 0), detail: `exit codes ${exits.join(', ')}` },
      {
        name: 'trickle: every message published and delivered',
        ok: written > 0 && pending === 0 && audit.missing === 0,
        detail: `${written} written, ${audit.missing} missing, ${pending} rows pending`,
      },
      {
        name: 'trickle: key order kept (first deliveries)',
        ok: audit.keyOrderViolations === 0,
        detail: `${audit.keyOrderViolations} first deliveries after a later message of their key`,
      },
    );
  } finally {
    await trickle.stop().catch(() => undefined);
    await writerClient.end().catch(() => undefined);
    await Promise.all(relays.map((relay) => relay.stop()));
    await capture?.close().catch(() => undefined);
    await contender.teardown(admin).catch(() => undefined);
    await broker.cleanup().catch(() => undefined);
  }
}
