import { execFile } from 'node:child_process';
import { createServer, connect as tcpConnect, type AddressInfo, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import type { Logger } from '../../src/core/ports.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import type { PublisherHarness, ReceivedMessage } from '../conformance/publisher-conformance.js';
import { services, uniqueName } from './services.js';

const run = promisify(execFile);
const brokerUrl = new URL(services.amqpUrl);
export const brokerPort = Number(brokerUrl.port || 5672);
export const brokerHost = brokerUrl.hostname;

/** Polls `probe` until it returns a value (not undefined) or the time is up; never a blind sleep. */
export async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A test-side AMQP connection and channel for declaring, binding, consuming and deleting. */
export async function openAdmin(): Promise<{ model: ChannelModel; channel: Channel; close(): Promise<void> }> {
  const model = await connect(services.amqpUrl);
  model.on('error', () => undefined);
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  return { model, channel, close: () => model.close().catch(() => undefined) };
}

/** A consumer-side view of a delivery, as any language reads it. */
export function toReceived(delivery: ConsumeMessage): ReceivedMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(delivery.properties.headers ?? {})) {
    if (typeof value === 'string') headers[name] = value;
  }
  const key = headers['x-outbox-key'];
  return {
    id: String(delivery.properties.messageId),
    topic: delivery.fields.routingKey,
    type: String(delivery.properties.type),
    key: key ?? null,
    headers,
    body: delivery.content.toString('utf8'),
    bytes: delivery.content,
    contentType: delivery.properties.contentType as string | undefined,
  };
}

/** An exchange with one queue bound to `<prefix>.#`, consumed into memory; deleted by `cleanup`. */
export async function isolatedExchange() {
  const admin = await openAdmin();
  const exchange = uniqueName('ox_ex');
  const queue = uniqueName('ox_q');
  const prefix = uniqueName('t');
  await admin.channel.assertExchange(exchange, 'topic', { durable: true });
  await admin.channel.assertQueue(queue, { exclusive: true, autoDelete: true, durable: false });
  await admin.channel.bindQueue(queue, exchange, `${prefix}.#`);
  const deliveries: ConsumeMessage[] = [];
  await admin.channel.consume(queue, (delivery) => delivery && deliveries.push(delivery), { noAck: true });
  return {
    admin,
    exchange,
    queue,
    deliveries,
    topic: (suffix: string) => `${prefix}.${suffix}`,
    unroutableTopic: `${prefix}_nowhere.x`,
    waitForDeliveries: (count: number, timeoutMs = 10_000) =>
      waitFor(() => (deliveries.length >= count ? deliveries.slice() : undefined), timeoutMs, `${count} deliveries on ${queue} (got ${deliveries.length})`),
    async cleanup(): Promise<void> {
      await admin.channel.deleteQueue(queue).catch(() => undefined);
      await admin.channel.deleteExchange(exchange).catch(() => undefined);
      await admin.close();
    },
  };
}

export const rabbitMqHarness: PublisherHarness = {
  name: 'rabbitmq',
  async setup() {
    const resources = await isolatedExchange();
    const publisher = createRabbitMqPublisher({
      url: services.amqpUrl,
      exchange: resources.exchange,
      clientName: uniqueName('ox_conf'),
      confirmTimeoutMs: 15_000,
    });
    return {
      publisher,
      topic: resources.topic,
      unroutableTopic: resources.unroutableTopic,
      waitForMessages: async (count, timeoutMs) => (await resources.waitForDeliveries(count, timeoutMs)).map(toReceived),
      async cleanup() {
        await publisher.close();
        await resources.cleanup();
      },
    };
  },
  async unreachable(secret) {
    const port = await closedPort();
    return createRabbitMqPublisher({ url: `amqp://guest:${secret}@127.0.0.1:${port}`, connectTimeoutMs: 1000, confirmTimeoutMs: 2000 });
  },
};

/** A local port nothing listens on (taken from the OS, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A TCP server that accepts connections and never says a word (a hung broker). */
export async function silentServer(): Promise<{ port: number; accepted(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  const port = await listen(server);
  return {
    port,
    accepted: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * A TCP proxy in front of the real broker that can fail the network the way it fails in production:
 * freeze one or both directions (bytes stop, no FIN, no RST) or cut every connection.
 */
export async function faultProxy() {
  const pairs = new Set<{ client: Socket; upstream: Socket; frozen: boolean }>();
  const server = createServer((client) => {
    const upstream = tcpConnect({ host: brokerHost, port: brokerPort });
    const pair = { client, upstream, frozen: false };
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = (): void => {
      if (pair.frozen) return; // a frozen network says nothing, not even that the other side left
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  const port = await listen(server);
  return {
    url: (password = 'guest') => `amqp://guest:${password}@127.0.0.1:${port}`,
    connections: () => pairs.size,
    /** Broker-to-client bytes stop: publishes reach the broker, confirms never come back. */
    freezeDownstream(): void {
      for (const pair of pairs) {
        pair.frozen = true;
        pair.upstream.unpipe(pair.client);
        pair.upstream.pause();
      }
    },
    /** Both directions stop: a silently dead network. */
    freezeAll(): void {
      this.freezeDownstream();
      for (const pair of pairs) {
        pair.client.unpipe(pair.upstream);
        pair.client.pause();
      }
    },
    /** Every connection reset at once. */
    cut(): void {
      for (const pair of pairs) {
        pair.frozen = false;
        pair.client.destroy();
        pair.upstream.destroy();
      }
      pairs.clear();
    },
    async close(): Promise<void> {
      this.cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Connections the broker holds with this `connection_name` client property, by Erlang pid. */
export async function brokerConnectionsNamed(name: string): Promise<string[]> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', '-q', '--no-table-headers', 'pid', 'client_properties'], { timeout: 30_000 });
  return stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${name}"}`))
    .map((line) => line.split('\t')[0] ?? '')
    .filter((pid) => pid !== '');
}

/** Has the broker close (CONNECTION_FORCED) every connection with this name; returns how many. */
export async function forceCloseConnectionsNamed(name: string): Promise<number> {
  const pids = await brokerConnectionsNamed(name);
  for (const pid of pids) await run('rabbitmqctl', ['close_connection', pid, 'outboxer test: forced close'], { timeout: 30_000 });
  return pids.length;
}

/** The broker's `max_message_size`, read from the broker itself (RabbitMQ's default is 128 MiB). */
export async function brokerMaxMessageSize(): Promise<number> {
  const { stdout } = await run('rabbitmqctl', ['eval', 'application:get_env(rabbit, max_message_size).'], { timeout: 30_000 });
  const match = /\{ok,(\d+)\}/.exec(stdout);
  if (match?.[1] === undefined) throw new Error(`cannot read max_message_size from rabbitmqctl: ${stdout.slice(0, 200)}`);
  return Number(match[1]);
}

/** A logger that keeps every line, to look for secrets in it. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (fields: Record<string, unknown>, message: string) => {
    lines.push(JSON.stringify({ level, message, ...fields }));
  };
  return { lines, debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}
