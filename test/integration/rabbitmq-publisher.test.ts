import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import { failureOf } from '../support/captured-errors.js';
import { faultProxy, openAdmin, rabbitMqHarness, toReceived } from '../support/rabbitmq-harness.js';
import { rabbitMqPublisherFixtures } from '../support/rabbitmq-publisher-fixtures.js';
import { services, uniqueName } from '../support/services.js';

describePublisherConformance(rabbitMqHarness);

const { cleanups, track, exchangeFixture, publisherFor } = rabbitMqPublisherFixtures();

describe('rabbitmq publisher: wire format', () => {
  it('sends the payload JSON as the body and id, type, key, correlation id and time as AMQP properties and headers', async () => {
    const fx = await exchangeFixture();
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange });
    const createdAt = new Date('2024-05-06T07:08:09.500Z');
    const message = testMessage(fx.topic('orders'), {
      createdAt,
      headers: { 'correlation-id': 'corr-9', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    await publisher.publish(message);
    const [delivery] = await fx.waitForDeliveries(1);
    expect(delivery?.content.toString('utf8')).toBe(message.body);
    expect(delivery?.fields).toMatchObject({ exchange: fx.exchange, routingKey: message.topic });
    expect(delivery?.properties).toMatchObject({
      contentType: 'application/json',
      deliveryMode: 2,
      messageId: message.id,
      type: message.type,
      appId: 'outboxer',
      correlationId: 'corr-9',
      timestamp: Math.floor(createdAt.getTime() / 1000),
    });
    expect(delivery?.properties.headers).toEqual({
      ...message.headers,
      'x-outbox-id': message.id,
      'x-outbox-type': message.type,
      'x-outbox-key': message.key,
    });
  });

  it('leaves out x-outbox-key and correlation id when the message has none, and outboxer headers win over message headers', async () => {
    const fx = await exchangeFixture();
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange });
    const message = testMessage(fx.topic('plain'), { key: null, headers: { 'x-outbox-key': 'forged', 'x-outbox-id': 'forged' } });
    await publisher.publish(message);
    const [delivery] = await fx.waitForDeliveries(1);
    expect(delivery?.properties.headers).toEqual({ 'x-outbox-id': message.id, 'x-outbox-type': message.type });
    expect(delivery?.properties.correlationId).toBeUndefined();
    expect(toReceived(delivery!).key).toBeNull();
  });

  it('declares a missing exchange as durable and of the configured type', async () => {
    const exchange = uniqueName('ox_decl');
    const admin = track(await openAdmin());
    cleanups.push(() => admin.channel.deleteExchange(exchange));
    const publisher = publisherFor({ url: services.amqpUrl, exchange, exchangeType: 'direct' });
    const error = await failureOf(publisher.publish(testMessage('anything')));
    expect(error.code).toBe('OUTBOXER_UNROUTABLE'); // the exchange exists now, nothing is bound to it
    const probe = await admin.model.createChannel();
    probe.on('error', () => undefined);
    await expect(probe.assertExchange(exchange, 'direct', { durable: true })).resolves.toBeDefined();
    await expect(probe.assertExchange(exchange, 'direct', { durable: false })).rejects.toThrow(/PRECONDITION_FAILED/);
  });

  it('with declareExchange false, fails with OUTBOXER_NO_EXCHANGE while the exchange is missing and recovers once it exists', async () => {
    const fx = await exchangeFixture();
    const missing = uniqueName('ox_missing');
    const publisher = publisherFor({ url: services.amqpUrl, exchange: missing, declareExchange: false });
    const started = Date.now();
    const error = await failureOf(publisher.publish(testMessage(fx.topic('x'))));
    expect(error.permanent).toBe(false);
    expect(error.code).toBe('OUTBOXER_NO_EXCHANGE'); // the relay pauses the topic: not the message's fault
    expect(error.message).toMatch(/NOT_FOUND/);
    expect(error.message).toContain(`exchange "${missing}" does not exist`);
    expect(Date.now() - started).toBeLessThan(5_000);
    await fx.admin.channel.assertExchange(missing, 'topic', { durable: true });
    cleanups.push(() => fx.admin.channel.deleteExchange(missing));
    await fx.admin.channel.bindQueue(fx.queue, missing, fx.topic('#'));
    await publisher.publish(testMessage(fx.topic('x')));
    await fx.waitForDeliveries(1);
  });
});

describe('rabbitmq publisher: confirms and returns', () => {
  it('fails the unroutable messages of a burst and confirms the routable ones', async () => {
    const fx = await exchangeFixture();
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange });
    const messages = Array.from({ length: 120 }, (_, i) => testMessage(i % 4 === 0 ? fx.unroutableTopic : fx.topic('burst'), { key: null }));
    const outcomes = await Promise.allSettled(messages.map((m) => publisher.publish(m)));
    outcomes.forEach((outcome, i) => {
      if (i % 4 === 0) {
        expect(outcome.status).toBe('rejected');
        const reason = (outcome as PromiseRejectedResult).reason as PublishError;
        expect(reason).toBeInstanceOf(PublishError);
        expect(reason.code).toBe('OUTBOXER_UNROUTABLE');
        expect(reason.permanent).toBe(false);
        expect(reason.message).toContain(messages[i]?.id);
      } else {
        expect(outcome.status).toBe('fulfilled');
      }
    });
    const deliveries = await fx.waitForDeliveries(90);
    expect(new Set(deliveries.map((d) => d.properties.messageId))).toEqual(new Set(messages.filter((_, i) => i % 4 !== 0).map((m) => m.id)));
  });

  it('fails a publish the broker nacks (queue full with reject-publish), retryably', async () => {
    const fx = await exchangeFixture();
    const full = uniqueName('ox_full');
    await fx.admin.channel.assertQueue(full, { exclusive: true, maxLength: 0, overflow: 'reject-publish' });
    await fx.admin.channel.bindQueue(full, fx.exchange, 'full.#');
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange });
    const error = await failureOf(publisher.publish(testMessage('full.x')));
    expect(error.code).toBe('OUTBOXER_PUBLISH_FAILED');
    expect(error.permanent).toBe(false);
    // What happened; whether it is retried or parked is the relay's to say (a dead row must not promise a retry).
    expect(error.message).toMatch(
      /was nacked by RabbitMQ: it did not store it \(a queue at its length limit with overflow reject-publish, or a resource alarm/,
    );
    expect(error.message).not.toMatch(/retried/);
    await publisher.publish(testMessage(fx.topic('after-nack')));
  });

  it('confirms a burst bigger than the socket buffers (backpressure), every message stored', async () => {
    const fx = await exchangeFixture();
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange });
    const payloadJson = JSON.stringify({ blob: 'x'.repeat(256 * 1024) });
    const messages = Array.from({ length: 200 }, () => testMessage(fx.topic('big'), { key: null, body: payloadJson }));
    await Promise.all(messages.map((m) => publisher.publish(m)));
    const deliveries = await fx.waitForDeliveries(messages.length, 30_000);
    expect(new Set(deliveries.map((d) => d.properties.messageId)).size).toBe(messages.length);
  });
  it('holds publishes back while the channel is full (backpressure), still bounded by confirmTimeoutMs', async () => {
    const fx = await exchangeFixture();
    const proxy = track(await faultProxy());
    // Small frames: amqplib's channel buffer holds 1024 frames, so a few messages fill it.
    const url = `${proxy.url()}?frameMax=4096`;
    const publisher = publisherFor({ url, exchange: fx.exchange, confirmTimeoutMs: 1_500, heartbeatSeconds: 0, connectTimeoutMs: 1_000 });
    await publisher.publish(testMessage(fx.topic('warm')));
    proxy.freezeAll(); // the socket stops draining, so amqplib's buffer fills up
    const payloadJson = JSON.stringify({ blob: 'x'.repeat(256 * 1024) });
    const started = Date.now();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 64 }, () => publisher.publish(testMessage(fx.topic('stuck'), { key: null, body: payloadJson }))),
    );
    // Bounded, not hung: every one ends by the confirm timeout (the code below says which bound ended it);
    // the margin over 1.5 s is for a loaded machine.
    expect(Date.now() - started).toBeLessThan(20_000);
    const errors = outcomes.map((o) => (o as PromiseRejectedResult).reason as PublishError);
    for (const error of errors) expect(error.code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    const heldBack = errors.filter((e) => e.message.includes('backpressure')).length;
    expect(heldBack).toBeGreaterThan(0); // never written: they waited for 'drain'
    expect(heldBack).toBeLessThan(errors.length); // the ones before the buffer filled were sent
  });
});
