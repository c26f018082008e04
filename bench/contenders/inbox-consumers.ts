import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect as natsConnect, nanos } from '@nats-io/transport-node';
import amqp, { type ConsumeMessage } from 'amqplib';
import type pg from 'pg';
import { createNatsConsumer, NATS_CONSUMER_DEFAULTS } from '../../src/brokers/nats/consumer/index.js';
import { NatsHeaderNames } from '../../src/brokers/nats/wire.js';
import { createRabbitMqConsumer, RABBITMQ_CONSUMER_DEFAULTS } from '../../src/brokers/rabbitmq/consumer/index.js';
import { Inbox } from '../../src/consumer/inbox.js';
import type { MessageHandler } from '../../src/consumer/message-registry.js';
import type { RawDelivery } from '../../src/consumer/received-message.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { PostgresInboxStore } from '../../src/stores/postgres/inbox/index.js';
import { services } from '../config.js';
import type { ConsumerSource } from '../support/consumer-source.js';

/** Unacknowledged deliveries at once, the same for both contenders: outboxer's consumer defaults. */
export const CONSUMER_WINDOW = { rabbitmq: RABBITMQ_CONSUMER_DEFAULTS.prefetch, nats: NATS_CONSUMER_DEFAULTS.maxAckPending } as const;
/** node-postgres's default `max`: the pool docs/consumer.md hands the inbox store; the minimal consumer gets the same. */
export const CONSUMER_POOL_SIZE = 10;
export const INBOX_CONSUMER_NAME = 'bench';

export const CONSUMER_SIDES = ['minimal', 'outboxer'] as const;
export type ConsumerSide = (typeof CONSUMER_SIDES)[number];

/** What a drain observes of a contender: its deliveries (the first starts the clock), its acks, a failure. */
export interface DrainProbe {
  delivered(): void;
  acked(): void;
  failed(error: unknown): void;
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

export interface ConsumerRun {
  readonly source: ConsumerSource;
  readonly pool: pg.Pool;
  /** `"<schema>".effects`, the handler's business table. */
  readonly effects: string;
  readonly schema: string;
  /** NATS: the durable consumer to create (and ask about afterwards). */
  readonly durable: string;
  readonly probe: DrainProbe;
}

export function effectsTableSql(schema: string): string {
  return `CREATE TABLE "${schema}".effects (message_id uuid PRIMARY KEY, payload jsonb NOT NULL)`;
}

export function startConsumer(side: ConsumerSide, run: ConsumerRun): Promise<RunningConsumer> {
  if (side === 'outboxer') return run.source.kind === 'rabbitmq' ? outboxerRabbitMq(run) : outboxerNats(run);
  return run.source.kind === 'rabbitmq' ? minimalRabbitMq(run) : minimalNats(run);
}

/** The floor: one pooled transaction per message, then the ack; no inbox, no key order. */
async function applyEffect(run: ConsumerRun, id: string | undefined, body: string): Promise<void> {
  const client = await run.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`INSERT INTO ${run.effects} (message_id, payload) VALUES ($1, $2)`, [id, body]);
    await client.query('COMMIT');
    client.release();
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release(true);
    throw error;
  }
}

async function minimalRabbitMq(run: ConsumerRun): Promise<RunningConsumer> {
  const connection = await amqp.connect(services.amqpUrl);
  const channel = await connection.createChannel();
  await channel.prefetch(CONSUMER_WINDOW.rabbitmq);
  const handle = async (message: ConsumeMessage): Promise<void> => {
    const id = typeof message.properties.messageId === 'string' ? message.properties.messageId : undefined;
    await applyEffect(run, id, message.content.toString('utf8'));
    channel.ack(message);
    run.probe.acked();
  };
  await channel.consume(
    run.source.name,
    (message) => {
      if (message === null) return;
      run.probe.delivered();
      handle(message).catch((error: unknown) => run.probe.failed(error));
    },
    { noAck: false },
  );
  return {
    async stop() {
      await channel.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

async function minimalNats(run: ConsumerRun): Promise<RunningConsumer> {
  const nc = await natsConnect({ servers: services.natsUrl, name: 'bench-minimal-consumer' });
  const { durable } = run;
  const jsm = await jetstreamManager(nc);
  // the durable outboxer's consumer creates for itself, with its defaults
  await jsm.consumers.add(run.source.name, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(NATS_CONSUMER_DEFAULTS.ackWaitMs),
    max_deliver: NATS_CONSUMER_DEFAULTS.maxDeliver,
    max_ack_pending: CONSUMER_WINDOW.nats,
  });
  const consumer = await jetstream(nc).consumers.get(run.source.name, durable);
  const messages = await consumer.consume({ max_messages: CONSUMER_WINDOW.nats });
  const handle = async (message: JsMsg): Promise<void> => {
    await applyEffect(run, message.headers?.get(NatsHeaderNames.msgId), message.string());
    message.ack();
    run.probe.acked();
  };
  const pulling = (async () => {
    for await (const message of messages) {
      run.probe.delivered();
      handle(message).catch((error: unknown) => run.probe.failed(error));
    }
  })().catch((error: unknown) => run.probe.failed(error));
  return {
    async stop() {
      await messages.close().catch(() => undefined);
      await pulling;
      await nc.flush().catch(() => undefined);
      await nc.close().catch(() => undefined);
    },
  };
}

/** `BENCH_MAX_BATCH` sets the outboxer consumer's `maxBatch` (1: a transaction per delivery); unset: its default. */
function maxBatchOverride(): { maxBatch?: number } {
  const value = process.env.BENCH_MAX_BATCH;
  return value === undefined || value === '' ? {} : { maxBatch: Number(value) };
}

/** The inbox over the run's pool; every delivery it is handed marks the probe (the first starts the clock). */
async function probedInbox(run: ConsumerRun): Promise<Inbox<SqlExecutor>> {
  const store = new PostgresInboxStore(fromPgPool(run.pool), { schema: run.schema });
  await store.migrate();
  const probe = run.probe;
  class ProbedInbox extends Inbox<SqlExecutor> {
    override handleDelivery(raw: RawDelivery, handler?: MessageHandler<SqlExecutor>): ReturnType<Inbox<SqlExecutor>['handleDelivery']> {
      probe.delivered();
      return super.handleDelivery(raw, handler);
    }

    override handleBatch(raws: readonly RawDelivery[], handler?: MessageHandler<SqlExecutor>): ReturnType<Inbox<SqlExecutor>['handleBatch']> {
      for (const _ of raws) probe.delivered();
      return super.handleBatch(raws, handler);
    }
  }
  return new ProbedInbox(store, { consumer: INBOX_CONSUMER_NAME });
}

function effectHandler(run: ConsumerRun): MessageHandler<SqlExecutor> {
  return async (message, tx) => {
    await tx.query(`INSERT INTO ${run.effects} (message_id, payload) VALUES ($1, $2)`, [message.id, JSON.stringify(message.payload)]);
  };
}

/** Counted just before the consumer's own ack call (the hook is awaited, then `ack()` runs on the same tick). */
const ackHook = (run: ConsumerRun) => ({ beforeAck: () => run.probe.acked() });

async function outboxerRabbitMq(run: ConsumerRun): Promise<RunningConsumer> {
  const consumer = createRabbitMqConsumer<SqlExecutor>({
    url: services.amqpUrl,
    exchange: run.source.exchange,
    queue: run.source.name,
    bindingKeys: [run.source.topic],
    inbox: await probedInbox(run),
    handler: effectHandler(run),
    hooks: ackHook(run),
    clientName: 'bench-outboxer-consumer',
    stopTimeoutMs: 5000,
    ...maxBatchOverride(),
  });
  await consumer.start();
  return consumer;
}

async function outboxerNats(run: ConsumerRun): Promise<RunningConsumer> {
  const consumer = createNatsConsumer<SqlExecutor>({
    servers: services.natsUrl,
    stream: run.source.name,
    durable: run.durable,
    inbox: await probedInbox(run),
    handler: effectHandler(run),
    hooks: ackHook(run),
    name: 'bench-outboxer-consumer',
    stopTimeoutMs: 5000,
    ...maxBatchOverride(),
  });
  await consumer.start();
  return consumer;
}
