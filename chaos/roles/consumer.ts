/**
 * Consumer role: records every delivery (copies included, in arrival order) with the broker's
 * redelivery flag, then acknowledges it. Reconnects on its own after a broker restart.
 */
import amqp from 'amqplib';
import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { Journal } from '../journal.js';
import { type ConsumerConfig, ENV_BROKER_URL, readRoleConfig, requireEnv } from '../spec.js';

const config = readRoleConfig<ConsumerConfig>('consumer');
const journal = new Journal(config.journal);
const url = requireEnv(ENV_BROKER_URL);
let stopping = false;
let closeCurrent: () => Promise<void> = async () => undefined;

function record(id: string, body: string, redelivered: boolean): void {
  let k: unknown = null;
  let v: unknown = null;
  try {
    ({ k, v } = JSON.parse(body) as { k?: unknown; v?: unknown });
  } catch {
    // not one of ours: the checker counts it as a phantom by id
  }
  journal.write({ e: 'd', id, k, v, r: redelivered });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function rabbitOnce(): Promise<void> {
  const connection = await amqp.connect(url, { timeout: 2000 });
  const closed = new Promise<void>((resolve) => {
    connection.on('close', () => resolve());
    connection.on('error', () => resolve());
  });
  closeCurrent = () => connection.close().catch(() => undefined);
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  await channel.prefetch(500);
  await channel.consume(config.queue, (msg) => {
    if (msg === null) return;
    record(String(msg.properties.messageId), msg.content.toString('utf8'), msg.fields.redelivered);
    channel.ack(msg);
  });
  journal.write({ e: 'connected' });
  await closed;
}

async function natsOnce(): Promise<void> {
  const nc = await natsConnect({ servers: url.replace(/\/\/[^@]*@/, '//'), ...credentials(url), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  closeCurrent = () => nc.close();
  const consumer = await jetstream(nc).consumers.get(config.queue, config.durable);
  const messages = await consumer.consume({ max_messages: 500 });
  journal.write({ e: 'connected' });
  for await (const m of messages) {
    record(m.headers?.get('Nats-Msg-Id') ?? '', m.string(), m.redelivered);
    m.ack();
  }
}

function credentials(raw: string): { user?: string; pass?: string } {
  const parsed = new URL(raw);
  return parsed.username === '' ? {} : { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) };
}

process.on('SIGTERM', () => {
  stopping = true;
  void closeCurrent().finally(() => {
    journal.write({ e: 'stopped' });
    process.exit(0);
  });
});

while (!stopping) {
  try {
    await (config.broker === 'rabbitmq' ? rabbitOnce() : natsOnce());
  } catch (error) {
    journal.write({ e: 'disconnected', error: error instanceof Error ? error.name : 'unknown' });
  }
  if (!stopping) await pause(300);
}
