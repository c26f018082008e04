import { Agent, request } from 'node:http';
import { connect, type IConnackPacket } from 'mqtt';
import { createClient } from 'redis';
import { bodyBytes } from '../../src/core/message.js';
import { toMqttPublication } from '../../src/brokers/mqtt/wire.js';
import { toRedisEntry } from '../../src/brokers/redis/wire.js';
import { signingKeyOf } from '../../src/brokers/webhook/signature.js';
import { requestHeaders, signedHeaders } from '../../src/brokers/webhook/wire.js';
import { services } from '../config.js';
import type { PublisherTarget } from '../support/publisher-targets.js';
import { ceilingMessage, type Workload } from '../support/workload.js';
import { type CeilingRun, windowed } from './ceiling-window.js';

/** A ceiling run and the window it kept (the broker may allow fewer in flight than asked). */
export interface OwnClientRun extends CeilingRun {
  readonly window: number;
}

/**
 * Redis Streams with node-redis directly: one client (node-redis pipelines what is issued together), `XADD <stream> *
 * <fields>` with the publisher's fields built by its wire function, each awaited for its reply (the entry id), at
 * most `window` awaiting; the client options the publisher uses (no offline queue).
 */
export async function redisOwnClient(target: PublisherTarget, workload: Workload, count: number, window: number): Promise<OwnClientRun> {
  const client = createClient({ url: services.redisUrl, disableOfflineQueue: true });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const run = await windowed(count, window, async (n) => {
      const entry = toRedisEntry(ceilingMessage(n, workload), '');
      const id = await client.xAdd(entry.stream, '*', entry.fields);
      if (typeof id !== 'string' || id === '') throw new Error('redis own client: XADD gave no entry id');
    });
    return { ...run, window };
  } finally {
    await client.close();
  }
}

/**
 * MQTT with MQTT.js directly: MQTT 5, clean start, QoS 1 publishes of the publisher's wire form (topic, user
 * properties, content type, payload), each awaited for a PUBACK with a success code (0x00 or 0x10, no
 * subscribers). In flight at most the smaller of `window` and the broker's Receive Maximum from its CONNACK: an
 * MQTT 5 client must keep to it (MQTT.js does not by itself), and outboxer's publisher does.
 */
export async function mqttOwnClient(target: PublisherTarget, workload: Workload, count: number, window: number): Promise<OwnClientRun> {
  const client = connect(services.mqttUrl, { protocolVersion: 5, clean: true, reconnectPeriod: 0, properties: { sessionExpiryInterval: 0 } });
  const connack = await new Promise<IConnackPacket>((resolve, reject) => {
    client.once('connect', resolve);
    client.once('error', reject);
  });
  const allowed = Math.min(window, connack.properties?.receiveMaximum ?? 65_535);
  try {
    const run = await windowed(count, allowed, async (n) => {
      const publication = toMqttPublication(ceilingMessage(n, workload), undefined);
      const packet = await client.publishAsync(publication.topic, publication.payload, publication.options);
      const reasonCode = (packet as { reasonCode?: number } | undefined)?.reasonCode ?? 0;
      if (reasonCode !== 0 && reasonCode !== 0x10) throw new Error(`mqtt own client: PUBACK reason code 0x${reasonCode.toString(16)}`);
    });
    return { ...run, window: allowed };
  } finally {
    await client.endAsync();
  }
}

/**
 * Webhooks with node:http directly: a keep-alive agent, one POST per message to the same receiver with the same
 * headers and body (Standard Webhooks signature included, built by the publisher's wire functions: a sender that
 * does not sign is not a webhook sender), each awaited for a 2xx status; at most `window` in flight, the
 * publisher's `maxConcurrencyPerEndpoint`.
 */
export async function webhookOwnClient(target: PublisherTarget, workload: Workload, count: number, window: number): Promise<OwnClientRun> {
  if (target.webhook === undefined) throw new Error('webhook own client: the target has no receiver');
  const key = signingKeyOf(target.webhook.secret);
  if (typeof key === 'string') throw new Error(`webhook own client: secret ${key}`);
  const url = target.webhook.url;
  const agent = new Agent({ keepAlive: true, maxSockets: window });
  try {
    const run = await windowed(count, window, (n) => {
      const message = ceilingMessage(n, workload);
      const body = bodyBytes(message.body);
      const headers = signedHeaders(requestHeaders(message, {}, body), [key], message.id, body);
      return new Promise<void>((resolve, reject) => {
        const post = request(url, { method: 'POST', headers, agent }, (response) => {
          response.resume();
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`webhook own client: status ${status}`));
        });
        post.on('error', reject);
        post.end(body);
      });
    });
    return { ...run, window };
  } finally {
    agent.destroy();
  }
}
