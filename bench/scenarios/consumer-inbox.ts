import { CONSUMER_POOL_SIZE, CONSUMER_SIDES, CONSUMER_WINDOW, type ConsumerSide } from '../contenders/inbox-consumers.js';
import { PostgresCpuMeter } from '../measure/process-cpu.js';
import type { BrokerKind } from '../support/broker-target.js';
import { type ConsumerDrain, drainConsumer } from '../support/consumer-drain.js';
import { newResult, round, type ScenarioContext, type ScenarioResult, target } from './scenario.js';

const NAMES: Record<ConsumerSide, string> = { minimal: 'minimal consumer', outboxer: 'outboxer consumer + inbox' };

/**
 * (m) Consumer with inbox vs a minimal consumer (issue 23): per broker, the same backlog, preloaded by outboxer's
 * publisher onto a queue or stream of each drain's own, drained by outboxer's consumer (createRabbitMqConsumer /
 * createNatsConsumer with an Inbox over PostgresInboxStore, its handler inserting one effects row through the
 * inbox's transaction) and by a minimal hand-written consumer (the broker's own client, the same prefetch /
 * max_ack_pending, per message BEGIN, the same INSERT, COMMIT, then ack, up to the window at once and no key
 * order), both in the bench process on pools of the same size, in alternating order (ABBA over the rounds).
 */
export async function consumerInbox(context: ScenarioContext): Promise<ScenarioResult> {
  const { sizes, admin, log } = context;
  const n = sizes.consumerMessages;
  const result = newResult('m', `Consumer with inbox vs a minimal consumer: ${n.toLocaleString('en-US')} preloaded messages drained by each`, {
    messages: n,
    rounds: sizes.consumerRounds,
    keys: sizes.keys,
    payloadBytes: sizes.payloadBytes,
    prefetch: `rabbitmq ${CONSUMER_WINDOW.rabbitmq}, nats max_ack_pending ${CONSUMER_WINDOW.nats}`,
    poolSize: CONSUMER_POOL_SIZE,
  });
  const meter = await PostgresCpuMeter.open(admin);
  if (meter === null) result.notes.push('PostgreSQL runs out of sight of /proc here (another pid namespace): its CPU is not measured.');
  for (const broker of context.brokers) {
    const drains: Record<ConsumerSide, ConsumerDrain[]> = { minimal: [], outboxer: [] };
    for (let r = 0; r < sizes.consumerRounds; r++) {
      for (const side of r % 2 === 0 ? CONSUMER_SIDES : [...CONSUMER_SIDES].reverse()) {
        log(`(m) ${broker}: round ${r + 1}, ${NAMES[side]}, ${n} messages`);
        const drain = await drainConsumer(admin, meter, broker, side, n, { keys: sizes.keys, payloadBytes: sizes.payloadBytes });
        drains[side].push(drain);
        const who = `${broker} ${NAMES[side]} round ${r + 1}`;
        const inbox = drain.inboxRows === null ? '' : `, inbox rows ${drain.inboxRows}/${n}`;
        result.checks.push({
          name: `${who}: ${n} preloaded, ${n} acked, exactly ${n} effects rows${drain.inboxRows === null ? '' : ' and inbox rows'}, nothing left`,
          ok: drain.error === null && drain.preloaded === n && drain.acked === n && drain.effects === n && (drain.inboxRows ?? n) === n && drain.left === 0,
          detail: `preloaded ${drain.preloaded}, acked ${drain.acked}, effects ${drain.effects}${inbox}, left at the broker ${drain.left}${drain.error === null ? '' : `, ${drain.error}`}`,
        });
      }
    }
    report(result, broker, n, drains);
  }
  result.notes.push(
    `Conditions: prefetch ${CONSUMER_WINDOW.rabbitmq} (RabbitMQ) / max_ack_pending ${CONSUMER_WINDOW.nats} (NATS), outboxer's consumer defaults, for both; a pg pool of ${CONSUMER_POOL_SIZE} each (node-postgres's default, as docs/consumer.md gives the inbox); ${n.toLocaleString('en-US')} messages over ${sizes.keys.toLocaleString('en-US')} keys (~${sizes.payloadBytes}-byte JSON) per drain, each contender on its own copy, queue or stream and schema.`,
    'perSecond: messages over first delivery to last ack, pooled over the rounds; roundRates: each round. The minimal consumer is the floor: one transaction (BEGIN, INSERT, COMMIT) and an ack per message, no inbox row, no key order, no retry. outboxer: per message the inbox claim (an INSERT of its row) and the same INSERT in one transaction, messages of one key one after another.',
    'CPU per message (µs) over first delivery to last ack: consumer = the bench process (process.cpuUsage(): the consumer, its broker client and pg driver; nothing else runs in it meanwhile); pg = every PostgreSQL process from /proc (10 ms ticks), less the live backends of other sessions (otherSessions counts them), as in (l); pgConsumer = the backends of the bench process (its pool and its idle admin session).',
  );
  return result;
}

function report(result: ScenarioResult, broker: BrokerKind, n: number, drains: Record<ConsumerSide, ConsumerDrain[]>): void {
  const pooled = (side: ConsumerSide) => {
    const runs = drains[side];
    const messages = n * runs.length;
    const sum = (pick: (d: ConsumerDrain) => number | null | undefined) => runs.reduce((total, d) => total + (pick(d) ?? Number.NaN), 0);
    const perMsg = (pick: (d: ConsumerDrain) => number | null | undefined) => round(sum(pick) / messages, 1);
    return {
      perSecond: Math.round(messages / sum((d) => d.seconds)),
      roundRates: runs.map((d) => Math.round(n / d.seconds)).join(' '),
      consumerUsPerMsg: perMsg((d) => d.consumerCpu),
      pgUsPerMsg: perMsg((d) => d.postgres?.total),
      pgConsumerUsPerMsg: perMsg((d) => d.postgres?.relayBackends),
      otherSessions: Math.max(...runs.map((d) => d.postgres?.otherSessions ?? 0)),
    };
  };
  const minimal = pooled('minimal');
  const ours = pooled('outboxer');
  const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? round(a / b) : null);
  for (const side of CONSUMER_SIDES) {
    const m = side === 'minimal' ? minimal : ours;
    result.rows.push({
      contender: NAMES[side],
      broker,
      metrics: {
        ...m,
        rateVsMinimal: ratio(m.perSecond, minimal.perSecond),
        consumerCpuVsMinimal: ratio(m.consumerUsPerMsg, minimal.consumerUsPerMsg),
        pgVsMinimal: ratio(m.pgUsPerMsg, minimal.pgUsPerMsg),
      },
    });
  }
  result.targets.push(
    target(`${broker}: consumer with inbox >= 0.9 x the minimal consumer`, '>= 0.9', ratio(ours.perSecond, minimal.perSecond), (v) => v >= 0.9),
  );
}
