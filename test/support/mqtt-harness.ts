import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import { createMqttPublisher, MqttUserProperties } from '../../src/brokers/mqtt/index.js';
import type { PublisherHarness, ReceivedMessage } from '../conformance/publisher-conformance.js';
import { freePort } from './nats-harness.js';
import { uniqueName } from './services.js';
import { waitFor } from './wait-for.js';

/** The shared Mosquitto of this machine (anonymous, MQTT 5). */
export const MQTT_URL = process.env.OUTBOXER_TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';

/** A delivery as an MQTT 5 subscriber gets it, outbox fields read back from the user properties. */
export interface MqttDelivery extends ReceivedMessage {
  /** The MQTT topic itself (the outbox topic with `.` as `/`, prefix included). */
  readonly mqttTopic: string;
  readonly payloadFormatIndicator: boolean | undefined;
  readonly retain: boolean;
  readonly qos: number;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Rebuilds what a consumer reads: outbox-id/type/key from the user properties, the topic with `/` back to `.`. */
export function toDelivery(packet: IPublishPacket, topicPrefix: string | undefined): MqttDelivery {
  const properties = packet.properties ?? {};
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(properties.userProperties ?? {})) headers[name] = single(value) ?? '';
  const bytes = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
  const levels = topicPrefix === undefined ? packet.topic : packet.topic.slice(topicPrefix.length + 1);
  return {
    id: headers[MqttUserProperties.id] ?? '',
    topic: levels.replaceAll('/', '.'),
    type: headers[MqttUserProperties.type] ?? '',
    key: headers[MqttUserProperties.key] ?? null,
    headers,
    body: bytes.toString('utf8'),
    bytes: new Uint8Array(bytes),
    contentType: properties.contentType,
    mqttTopic: packet.topic,
    payloadFormatIndicator: properties.payloadFormatIndicator,
    retain: packet.retain,
    qos: packet.qos,
  };
}

/** An MQTT 5 subscriber (clean start, nothing kept after it) that records every delivery under `filter`. */
export interface MqttRecorder {
  readonly client: MqttClient;
  readonly deliveries: MqttDelivery[];
  waitFor(count: number, timeoutMs?: number): Promise<MqttDelivery[]>;
  close(): Promise<void>;
}

export async function recordTopics(filter: string, options: { url?: string; topicPrefix?: string } = {}): Promise<MqttRecorder> {
  const client = await connectAsync(options.url ?? MQTT_URL, {
    protocolVersion: 5,
    clientId: uniqueName('rec').replaceAll('_', ''),
    clean: true,
    reconnectPeriod: 0,
  });
  const deliveries: MqttDelivery[] = [];
  client.on('message', (_topic, _payload, packet) => deliveries.push(toDelivery(packet, options.topicPrefix)));
  await client.subscribeAsync(filter, { qos: 1 });
  return {
    client,
    deliveries,
    async waitFor(count, timeoutMs = 10_000) {
      await waitFor(() => deliveries.length >= count, { timeoutMs, what: `${count} MQTT deliveries on ${filter} (got ${deliveries.length})` });
      return [...deliveries];
    },
    close: () => client.endAsync(),
  };
}

export const mqttHarness: PublisherHarness = {
  name: 'MQTT',
  async setup() {
    const prefix = uniqueName('p');
    const recorder = await recordTopics(`${prefix}/#`);
    const publisher = createMqttPublisher({ url: MQTT_URL, publishTimeoutMs: 5000, connectTimeoutMs: 3000 });
    return {
      publisher,
      topic: (suffix) => `${prefix}.${suffix}`,
      unroutableTopic: null,
      waitForMessages: (count, timeoutMs) => recorder.waitFor(count, timeoutMs),
      async cleanup() {
        await publisher.close();
        await recorder.close();
      },
    };
  },
  async unreachable(secret) {
    const port = await freePort();
    return createMqttPublisher({ url: `mqtt://relay:${secret}@127.0.0.1:${port}`, publishTimeoutMs: 2000, connectTimeoutMs: 1000 });
  },
};

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** What a private Mosquitto is configured with (mosquitto.conf(5)). */
export interface PrivateMosquittoConfig {
  /** Users and passwords: anonymous clients are refused when given. */
  readonly users?: Readonly<Record<string, string>>;
  /** Lines of an acl_file (`user alice`, `topic write orders/#`). */
  readonly acl?: readonly string[];
  /** max_packet_size: announced as Maximum Packet Size in the CONNACK. */
  readonly maxPacketSize?: number;
  /** max_inflight_messages: announced as Receive Maximum in the CONNACK. */
  readonly maxInflightMessages?: number;
}

/** A Mosquitto on its own port and directory, that a test may configure, freeze, kill and restart. */
export class PrivateMosquitto {
  #process: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly directory: string,
  ) {}

  static async create(config: PrivateMosquittoConfig = {}): Promise<PrivateMosquitto> {
    const directory = await mkdtemp(join(tmpdir(), 'outboxer-mosquitto-'));
    await chmod(directory, 0o755); // mosquitto reads its files after it dropped to its own user
    const server = new PrivateMosquitto(await freePort(), directory);
    const lines = [`listener ${server.port} 127.0.0.1`, 'persistence false', `allow_anonymous ${config.users === undefined}`];
    if (config.users !== undefined) {
      const file = join(directory, 'passwords');
      await writeFile(file, '');
      for (const [user, password] of Object.entries(config.users)) {
        const result = spawnSync('mosquitto_passwd', ['-b', file, user, password]);
        if (result.status !== 0) throw new Error(`mosquitto_passwd failed: ${result.stderr.toString()}`);
      }
      await chmod(file, 0o644);
      lines.push(`password_file ${file}`);
    }
    if (config.acl !== undefined) {
      await writeFile(join(directory, 'acl'), `${config.acl.join('\n')}\n`, { mode: 0o644 });
      lines.push(`acl_file ${join(directory, 'acl')}`);
    }
    if (config.maxPacketSize !== undefined) lines.push(`max_packet_size ${config.maxPacketSize}`);
    if (config.maxInflightMessages !== undefined) lines.push(`max_inflight_messages ${config.maxInflightMessages}`);
    await writeFile(join(directory, 'mosquitto.conf'), `${lines.join('\n')}\n`, { mode: 0o644 });
    return server;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  /** Starts it and waits until the port takes connections (the CONNACK may still refuse, as configured). */
  async start(): Promise<void> {
    const child = spawn('/usr/sbin/mosquitto', ['-c', join(this.directory, 'mosquitto.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    this.#process = child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`mosquitto exited with ${child.exitCode}: ${stderr}`);
        return portOpen(this.port);
      },
      { timeoutMs: 10_000, what: `private mosquitto on port ${this.port}` },
    );
  }

  /** Bytes the kernel holds for the broker, unread, on its client connections (a frozen broker reads nothing). */
  unreadBytes(): number {
    const result = spawnSync('ss', ['-tnH', 'state', 'established', `( sport = :${this.port} )`], { encoding: 'utf8' });
    return result.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[0]), 0);
  }

  /** SIGSTOP, waiting until it is stopped: it keeps its sockets open and answers nothing. */
  async freeze(): Promise<void> {
    const pid = this.#process?.pid;
    if (pid === undefined) throw new Error('the private mosquitto is not running');
    this.#process?.kill('SIGSTOP');
    await waitFor(
      async () => {
        const tasks = await readdir(`/proc/${pid}/task`);
        const states = await Promise.all(tasks.map(async (task) => (await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8')).replace(/^.*\) /s, '')[0]));
        return states.every((state) => state === 'T' || state === 't');
      },
      { timeoutMs: 5000, what: 'the private mosquitto to stop' },
    );
  }

  thaw(): void {
    this.#process?.kill('SIGCONT');
  }

  /** SIGKILL, waiting for the process to be gone. */
  async kill(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.kill();
    await rm(this.directory, { recursive: true, force: true });
  }
}
