import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import type { Publisher } from '../../src/index.js';
import { createMqttPublisher } from '../../src/brokers/mqtt/index.js';
import { createRedisPublisher } from '../../src/brokers/redis/index.js';
import { createWebhookPublisher } from '../../src/brokers/webhook/index.js';
import { pidOf, procStat } from '../measure/process-cpu.js';
import { services } from '../config.js';
import { uniqueName } from './database.js';

/** The publishers of issue 21 that run against local servers (Pub/Sub and SQS/SNS have emulators only: not benched). */
export type PublisherKind = 'redis' | 'mqtt' | 'webhook';
export const PUBLISHER_KINDS: readonly PublisherKind[] = ['redis', 'mqtt', 'webhook'];

/**
 * Fresh destination resources for one measurement: a Redis stream, an MQTT topic, or a webhook receiver (a child
 * process of its own, so its CPU is not the publisher's). `stored()` is what the destination holds or received
 * (undefined for MQTT: nobody subscribes while we measure, so Mosquitto keeps nothing; the PUBACK is the count).
 */
export interface PublisherTarget {
  readonly kind: PublisherKind;
  readonly topic: string;
  /** The process that receives the messages (redis-server, mosquitto, the receiver), for its CPU time. */
  readonly serverPid: number | undefined;
  /** The webhook receiver's URL and the signing secret; undefined for the brokers. */
  readonly webhook?: { readonly url: string; readonly secret: string };
  publisher(): Publisher;
  stored(): Promise<number | undefined>;
  cleanup(): Promise<void>;
}

/** The documented Standard Webhooks secret form: `whsec_` and the base64 of 32 random bytes. */
export const benchSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export async function createPublisherTarget(kind: PublisherKind): Promise<PublisherTarget> {
  if (kind === 'redis') return redisTarget();
  if (kind === 'mqtt') return mqttTarget();
  return webhookTarget();
}

function tracking(make: () => Publisher): { publisher: () => Publisher; closeAll: () => Promise<void> } {
  const made: Publisher[] = [];
  return {
    publisher() {
      const publisher = make();
      made.push(publisher);
      return publisher;
    },
    async closeAll() {
      await Promise.allSettled(made.map((p) => p.close()));
    },
  };
}

async function redisTarget(): Promise<PublisherTarget> {
  const topic = `${uniqueName('bench')}.evt`;
  const admin = createClient({ url: services.redisUrl });
  admin.on('error', () => undefined);
  await admin.connect();
  const info = await admin.info('server');
  const pid = /process_id:(\d+)/.exec(info)?.[1];
  const made = tracking(() => createRedisPublisher({ url: services.redisUrl, clientName: 'outboxer-bench' }));
  return {
    kind: 'redis',
    topic,
    serverPid: pid === undefined ? undefined : Number(pid),
    publisher: made.publisher,
    stored: () => admin.xLen(topic),
    async cleanup() {
      await made.closeAll();
      await admin.del(topic);
      await admin.close();
    },
  };
}

async function mqttTarget(): Promise<PublisherTarget> {
  const topic = `${uniqueName('bench')}.evt`;
  const made = tracking(() => createMqttPublisher({ url: services.mqttUrl }));
  return { kind: 'mqtt', topic, serverPid: pidOf('mosquitto'), publisher: made.publisher, stored: async () => undefined, cleanup: made.closeAll };
}

/** The receiver: node:http, reads each body, answers 204; counts POSTs and tells the count over IPC. No verification. */
const RECEIVER = `
const http = require('node:http');
let count = 0;
const server = http.createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => { if (req.method === 'POST') count++; res.writeHead(204); res.end(); });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', () => process.send({ count }));
process.on('disconnect', () => process.exit(0));
`;

function ask<T>(child: ChildProcess, key: string, send?: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`webhook receiver: no ${key} within 10 s`)), 10_000);
    const onMessage = (message: Record<string, T>) => {
      if (!(key in message)) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message[key] as T);
    };
    child.on('message', onMessage);
    if (send !== undefined) child.send(send);
  });
}

async function webhookTarget(): Promise<PublisherTarget> {
  const topic = `${uniqueName('bench')}.evt`;
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await ask<number>(child, 'port');
  const webhook = { url: `http://127.0.0.1:${port}/outbox`, secret: benchSecret() };
  const made = tracking(() => createWebhookPublisher({ url: webhook.url, secret: webhook.secret }));
  return {
    kind: 'webhook',
    topic,
    serverPid: child.pid,
    webhook,
    publisher: made.publisher,
    stored: () => ask<number>(child, 'count', 'count'),
    async cleanup() {
      await made.closeAll();
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

/** User + system CPU time of a process in µs, from /proc/<pid>/stat (tick resolution, 10 ms here); 0 if unreadable. */
export function processCpuMicros(pid: number | undefined): number {
  return pid === undefined ? 0 : (procStat(pid)?.cpu ?? 0);
}

/** The CPU a set of processes used between `start()` and `stop()`; processes that appear meanwhile count from 0. */
export function cpuMeter(pids: () => Promise<readonly number[]>): { start(): Promise<void>; stop(): Promise<number> } {
  const before = new Map<number, number>();
  return {
    async start() {
      for (const pid of await pids()) before.set(pid, processCpuMicros(pid));
    },
    async stop() {
      let total = 0;
      for (const pid of await pids()) total += processCpuMicros(pid) - (before.get(pid) ?? 0);
      return total;
    },
  };
}
