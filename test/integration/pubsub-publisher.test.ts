import { afterEach, describe, expect, it } from 'vitest';
import { failureAction } from '../../src/core/publish-failure.js';
import { createPubSubPublisher, PubSubAttributeNames, resolvePubSubPublisherOptions } from '../../src/brokers/pubsub/index.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import { failureOf } from '../support/captured-errors.js';
import { recordingLogger } from '../support/nats-harness.js';
import {
  emulatorOptions,
  isolatedTopic,
  outboxTopicOf,
  type IsolatedTopic,
  pubsubHarness,
  pubsubPublisherPool,
  pullOnce,
  toReceived,
} from '../support/pubsub-harness.js';
import { uniqueName } from '../support/services.js';

describePublisherConformance(pubsubHarness);

describe('Pub/Sub publisher', () => {
  const pool = pubsubPublisherPool();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await pool.closeAll();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const ownTopic = async (topicId?: string): Promise<IsolatedTopic> => {
    const topic = await isolatedTopic(topicId);
    cleanups.push(() => topic.cleanup());
    return topic;
  };

  it('puts the message on the wire as documented: exact data, attributes, ordering key; read back over REST with curl', async () => {
    const { topic, waitForPulled } = await ownTopic();
    const publisher = pool.make();
    const body = '{"b": 1,  "a":"caf\\u00e9"}';
    const keyed = testMessage(topic, { body, headers: { 'correlation-id': 'c-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    const plain = testMessage(topic, { key: null, headers: {}, body: Uint8Array.from([0, 0xff, 0x80]), contentType: 'application/x-protobuf' });
    await publisher.publish(keyed);
    await publisher.publish(plain);
    const pulled = await waitForPulled(2);
    const byId = new Map(pulled.map((m) => [m.attributes?.[PubSubAttributeNames.id], m]));
    expect(byId.get(keyed.id)).toEqual({
      data: Buffer.from(body, 'utf8').toString('base64'),
      attributes: {
        'correlation-id': 'c-1',
        traceparent: keyed.headers.traceparent,
        'outbox-id': keyed.id,
        'outbox-type': 'order.created',
        'outbox-key': 'order-1',
        'content-type': 'application/json',
      },
      messageId: expect.any(String),
      publishTime: expect.any(String),
      orderingKey: 'order-1',
    });
    const unkeyed = byId.get(plain.id);
    expect(Buffer.from(unkeyed?.data ?? '', 'base64')).toEqual(Buffer.from([0, 0xff, 0x80]));
    expect(unkeyed?.attributes).toEqual({ 'outbox-id': plain.id, 'outbox-type': 'order.created', 'content-type': 'application/x-protobuf' });
    expect(unkeyed?.orderingKey ?? '').toBe('');
  });

  it('keeps per-key order through an ordered subscription, keys interleaved and published concurrently', async () => {
    const { topic, waitForPulled } = await ownTopic();
    const publisher = pool.make();
    const messages = Array.from({ length: 60 }, (_, i) => testMessage(topic, { key: `k${i % 3}`, seq: String(i), headers: { n: String(i) } }));
    await Promise.all(messages.map((m) => publisher.publish(m)));
    const pulled = await waitForPulled(messages.length);
    for (const key of ['k0', 'k1', 'k2']) {
      const sent = messages.filter((m) => m.key === key).map((m) => m.id);
      const got = pulled.filter((m) => m.orderingKey === key).map((m) => m.attributes?.[PubSubAttributeNames.id]);
      expect(got).toEqual(sent);
    }
  });

  it('sends no ordering key with ordering: false, and the key stays an attribute', async () => {
    const { topic, waitForPulled } = await ownTopic();
    const message = testMessage(topic);
    await pool.make({ ordering: false }).publish(message);
    const [pulled] = await waitForPulled(1);
    expect(pulled?.orderingKey ?? '').toBe('');
    expect(pulled?.attributes?.[PubSubAttributeNames.key]).toBe('order-1');
  });

  it('fails a missing topic with a retryable OUTBOXER_NO_STREAM (the relay pauses the topic), then publishes the same key once the topic exists', async () => {
    const publisher = pool.make();
    const topicId = uniqueName('late');
    const first = testMessage(topicId, { key: 'order-7' });
    const error = await failureOf(publisher.publish(first));
    expect(error.code).toBe('OUTBOXER_NO_STREAM');
    expect(error.permanent).toBe(false);
    expect(failureAction(error)).toBe('pause-topic');
    expect(error.message).toContain(`"${topicId}"`);
    expect(error.message).toContain(first.id);
    expect(error.message).toMatch(/gcloud pubsub topics create/);
    // The client now holds key order-7 paused: without resumePublishing every later publish of it fails.
    const topic = await ownTopic(topicId);
    await expect(publisher.publish(first)).resolves.toBeUndefined();
    const second = testMessage(topicId, { key: 'order-7' });
    await expect(publisher.publish(second)).resolves.toBeUndefined();
    const pulled = await topic.waitForPulled(2);
    expect(pulled.map((m) => [m.attributes?.[PubSubAttributeNames.id], m.orderingKey])).toEqual([
      [first.id, 'order-7'],
      [second.id, 'order-7'],
    ]);
  });

  it('maps outbox topics onto topic ids: topicPrefix in front, ":" and "/" percent-encoded', async () => {
    const prefix = `${uniqueName('pre')}-`;
    const outboxTopic = 'orders/eu:west.created';
    const topicId = `${prefix}orders%2Feu%3Awest.created`;
    const topic = await ownTopic(topicId);
    const message = testMessage(outboxTopic);
    await pool.make({ topicPrefix: prefix }).publish(message);
    const [pulled] = await topic.waitForPulled(1);
    expect(toReceived(pulled!, outboxTopicOf(topicId, prefix))).toMatchObject({ id: message.id, topic: outboxTopic });
  });

  it('refuses permanently, before sending, what Pub/Sub cannot take', async () => {
    const { topic, subscription } = await ownTopic();
    const publisher = pool.make();
    const cases: [Parameters<typeof testMessage>[1], string, string][] = [
      [{ headers: { big: 'x'.repeat(1025) } }, 'OUTBOXER_INVALID_HEADER', '1024'],
      [{ headers: { 'goog-client': 'x' } }, 'OUTBOXER_INVALID_HEADER', 'goog'],
      [{ body: 'x'.repeat(10_000_000) }, 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', '10000000'],
      [{ topic: '9lives' }, 'OUTBOXER_INVALID_TOPIC', 'topicPrefix'],
      [{ topic: 'ab' }, 'OUTBOXER_INVALID_TOPIC', 'topic id'],
      [{ topic: 'google.events' }, 'OUTBOXER_INVALID_TOPIC', 'goog'],
      [{ topic: 'a.b c' }, 'OUTBOXER_INVALID_TOPIC', 'a.b c'],
    ];
    for (const [overrides, code, words] of cases) {
      const message = testMessage(topic, overrides);
      const error = await failureOf(publisher.publish(message));
      expect({ code: error.code, permanent: error.permanent, action: failureAction(error) }, message.topic).toEqual({ code, permanent: true, action: 'dead' });
      expect(error.message).toContain(message.id);
      expect(error.message).toContain(words);
    }
    expect(await pullOnce(subscription)).toEqual([]);
  });

  it('lets its own attributes win over headers of the same name (compared without case)', async () => {
    const { topic, waitForPulled } = await ownTopic();
    const message = testMessage(topic, { headers: { 'Outbox-Id': 'forged', 'content-type': 'text/plain', tenant: 'acme' } });
    await pool.make().publish(message);
    const [pulled] = await waitForPulled(1);
    expect(pulled?.attributes).toEqual({
      tenant: 'acme',
      'outbox-id': message.id,
      'outbox-type': 'order.created',
      'outbox-key': 'order-1',
      'content-type': 'application/json',
    });
  });

  it('verify() reaches the emulator, and says connected; an endpoint nobody answers is an outage, not a misconfiguration', async () => {
    const publisher = pool.make();
    expect(publisher.connectionState?.()).toBe('connecting');
    await expect(publisher.verify?.()).resolves.toBeUndefined();
    expect(publisher.connectionState?.()).toBe('connected');
    const unreachable = await pubsubHarness.unreachable('not-a-secret');
    cleanups.push(() => unreachable.close());
    const error = await failureOf(unreachable.verify?.() ?? Promise.resolve());
    expect(error.code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
    expect(unreachable.connectionState?.()).toBe('disconnected');
    const publishError = await failureOf(unreachable.publish(testMessage('orders.x')));
    expect({ code: publishError.code, action: failureAction(publishError) }).toEqual({ code: 'OUTBOXER_BROKER_UNAVAILABLE', action: 'release' });
  });

  it('closes with a publish in flight: it settles first, later publishes fail with OUTBOXER_CLOSED', async () => {
    const { topic, waitForPulled } = await ownTopic();
    const publisher = pool.make();
    const message = testMessage(topic);
    const publishing = publisher.publish(message);
    await publisher.close();
    await expect(publishing).resolves.toBeUndefined();
    expect((await failureOf(publisher.publish(testMessage(topic)))).code).toBe('OUTBOXER_CLOSED');
    expect(publisher.connectionState?.()).toBe('disconnected');
    expect((await waitForPulled(1)).map((m) => m.attributes?.[PubSubAttributeNames.id])).toEqual([message.id]);
  });

  it('logs no secret from clientConfig, and the resolved options do not show it', async () => {
    const logger = recordingLogger();
    const secret = `-----BEGIN PRIVATE KEY-----canary-${Math.random().toString(36).slice(2)}`;
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- a service-account credential on purpose: it must never be logged
    const options = emulatorOptions({ logger, clientConfig: { credentials: { client_email: 'relay@x.iam.gserviceaccount.com', private_key: secret } } });
    expect(JSON.stringify(resolvePubSubPublisherOptions(options))).not.toContain(secret);
    const publisher = createPubSubPublisher(options);
    cleanups.push(() => publisher.close());
    const error = await failureOf(publisher.publish(testMessage(uniqueName('nosuchtopic'))));
    await publisher.close();
    expect(`${error.message}${error.stack ?? ''}${JSON.stringify(error)}${logger.lines.join('\n')}`).not.toContain(secret);
  });
});
