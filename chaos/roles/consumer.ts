/**
 * Consumer role: records every delivery (copies included, in arrival order) with the broker's
 * redelivery flag and the destination it came from, then acknowledges it. Reads every destination of the
 * scenario (`sources`: `default` and, with fan-out, the named ones), each on a connection of its own that
 * reconnects on its own after a broker restart.
 */
import amqp from 'amqplib';
import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { Journal } from '../journal.js';
import { type ConsumerConfig, DEFAULT_DESTINATION, type DestinationWiring, readRoleConfig, requireEnv } from '../spec.js';

const config = readRoleConfig<ConsumerConfig>('consumer');
const journal = new Journal(config.journal);
let stopping = false;
const closers = new Map<string, () => Promise<void>>();

function record(source: DestinationWiring, id: string, body: string, redelivered: boolean): void {
  let k: unknown = null;
  let v: unknown = null;
  try {
    ({ k, v } = JSON.parse(body) as { k?: unknown; v?: unknown });
  } catch {
    // not one of ours: the checker counts it as a phantom by id
  }
  journal.write({ e: 'd', id, k, v, r: redelivered, ...(source.name === DEFAULT_DESTINATION ? {} : { to: source.name }) });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const connected = (source: DestinationWiring) => journal.write({ e: 'connected', ...(source.name === DEFAULT_DESTINATION ? {} : { to: source.name }) });

async function rabbitOnce(source: DestinationWiring, url: string): Promise<void> {
  const connection = await amqp.connect(url, { timeout: 2000 });
  const closed = new Promise<void>((resolve) => {
    connection.on('close', () => resolve());
    connection.on('error', () => resolve());
  });
  closers.set(source.name, () => connection.close().catch(() => undefined));
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  await channel.prefetch(500);
  await channel.consume(source.queue, (msg) => {
    if (msg === null) return;
    record(source, String(msg.properties.messageId), msg.content.toString('utf8'), msg.fields.redelivered);
    channel.ack(msg);
  });
  connected(source);
  await closed;
}

async function natsOnce(source: DestinationWiring, url: string): Promise<void> {
  const nc = await natsConnect({ servers: url.replace(/\/\/[^@]*@/, '//'), ...credentials(url), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  closers.set(source.name, () => nc.close());
  const consumer = await jetstream(nc).consumers.get(source.queue, source.durable);
  const messages = await consumer.consume({ max_messages: 500 });
  connected(source);
  for await (const m of messages) {
    record(source, m.headers?.get('Nats-Msg-Id') ?? '', m.string(), m.redelivered);
    m.ack();
  }
}

function credentials(raw: string): { user?: string; pass?: string } {
  const parsed = new URL(raw);
  return parsed.username === '' ? {} : { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) };
}

async function consume(source: DestinationWiring): Promise<void> {
  const url = requireEnv(source.urlEnv);
  while (!stopping) {
    try {
      await (source.broker === 'rabbitmq' ? rabbitOnce(source, url) : natsOnce(source, url));
    } catch (error) {
      journal.write({
        e: 'disconnected',
        error: error instanceof Error ? error.name : 'unknown',
        ...(source.name === DEFAULT_DESTINATION ? {} : { to: source.name }),
      });
    }
    if (!stopping) await pause(300);
  }
}

process.on('SIGTERM', () => {
  stopping = true;
  void Promise.all([...closers.values()].map((close) => close())).finally(() => {
    journal.write({ e: 'stopped' });
    process.exit(0);
  });
});

await Promise.all(config.sources.map((source) => consume(source)));
