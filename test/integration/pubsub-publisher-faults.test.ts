import { afterEach, describe, expect, it } from 'vitest';
import { failureAction } from '../../src/core/publish-failure.js';
import { PubSubAttributeNames } from '../../src/brokers/pubsub/index.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { failureOf } from '../support/captured-errors.js';
import { type IsolatedTopic, isolatedTopic, pubsubEmulator, pubsubPublisherPool } from '../support/pubsub-harness.js';
import { uniqueName } from '../support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

describe('Pub/Sub publisher faults', () => {
  const pool = pubsubPublisherPool();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await pool.closeAll();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const proxy = async (): Promise<TcpProxy> => {
    const started = await TcpProxy.start(Number(pubsubEmulator.host.split(':')[1] ?? 8085));
    cleanups.push(() => started.close());
    return started;
  };
  const ownTopic = async (topicId?: string): Promise<IsolatedTopic> => {
    const topic = await isolatedTopic(topicId);
    cleanups.push(() => topic.cleanup());
    return topic;
  };

  it('bounds a publish that gets no answer by publishTimeoutMs: OUTBOXER_PUBLISH_TIMEOUT, retried by the relay', async () => {
    const { topic } = await ownTopic();
    const gate = await proxy();
    gate.setMode('blackhole');
    const publisher = pool.make({ apiEndpoint: `127.0.0.1:${gate.port}`, publishTimeoutMs: 800 });
    const started = performance.now();
    const error = await failureOf(publisher.publish(testMessage(topic)));
    const tookMs = performance.now() - started;
    expect({ code: error.code, permanent: error.permanent, action: failureAction(error) }).toEqual({
      code: 'OUTBOXER_PUBLISH_TIMEOUT',
      permanent: false,
      action: 'retry',
    });
    expect(tookMs).toBeGreaterThanOrEqual(700);
    expect(tookMs).toBeLessThan(800 + 1000);
  });

  it('reports an outage as disconnected, probes by itself, and says connected again once the service answers', async () => {
    const { topic, waitForPulled } = await ownTopic();
    const gate = await proxy();
    gate.setMode('refuse');
    const publisher = pool.make({ apiEndpoint: `127.0.0.1:${gate.port}`, publishTimeoutMs: 2000 });
    expect((await failureOf(publisher.verify?.() ?? Promise.resolve())).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
    const lost = await failureOf(publisher.publish(testMessage(topic)));
    expect({ code: lost.code, action: failureAction(lost) }).toEqual({ code: 'OUTBOXER_BROKER_UNAVAILABLE', action: 'release' });
    expect(publisher.connectionState?.()).toBe('disconnected');
    gate.setMode('forward');
    await waitFor(() => publisher.connectionState?.() === 'connected', { timeoutMs: 15_000, what: 'the background probe to reach the emulator' });
    const message = testMessage(topic);
    await publisher.publish(message);
    expect((await waitForPulled(1)).map((m) => m.attributes?.[PubSubAttributeNames.id])).toEqual([message.id]);
  });

  it('after a key failed with publishes of it in flight, a retry of the whole key goes through in order', async () => {
    const publisher = pool.make();
    const topicId = uniqueName('late');
    const messages = Array.from({ length: 3 }, () => testMessage(topicId, { key: 'order-9' }));
    const failures = await Promise.all(messages.map((m) => failureOf(publisher.publish(m))));
    expect(failures.map((f) => f.code)).toEqual(['OUTBOXER_NO_STREAM', 'OUTBOXER_NO_STREAM', 'OUTBOXER_NO_STREAM']);
    const topic = await ownTopic(topicId);
    for (const message of messages) await publisher.publish(message);
    const pulled = await topic.waitForPulled(messages.length);
    expect(pulled.map((m) => [m.attributes?.[PubSubAttributeNames.id], m.orderingKey])).toEqual(messages.map((m) => [m.id, 'order-9']));
  });
});
