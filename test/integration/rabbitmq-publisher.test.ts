import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, OutboxerError, PublishError } from '../../src/core/errors.js';
import type { Publisher } from '../../src/core/ports.js';
import {
  createRabbitMqPublisher,
  RABBITMQ_PUBLISHER_DEFAULTS,
  resolveRabbitMqPublisherOptions,
  type RabbitMqPublisherOptions,
} from '../../src/publishers/rabbitmq/index.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import {
  brokerConnectionsNamed,
  brokerMaxMessageSize,
  closedPort,
  faultProxy,
  forceCloseConnectionsNamed,
  isolatedExchange,
  openAdmin,
  rabbitMqHarness,
  recordingLogger,
  silentServer,
  toReceived,
  waitFor,
} from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';

describePublisherConformance(rabbitMqHarness);

/** Everything a test opened, closed afterwards even when the test fails. */
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
function track<T extends { close(): Promise<unknown> } | { cleanup(): Promise<unknown> }>(resource: T): T {
  cleanups.push(() => ('cleanup' in resource ? resource.cleanup() : resource.close()));
  return resource;
}
async function exchangeFixture() {
  return track(await isolatedExchange());
}
function publisherFor(options: RabbitMqPublisherOptions): Publisher {
  return track(createRabbitMqPublisher({ clientName: uniqueName('ox_rmq'), ...options }));
}
async function failureOf(promise: Promise<unknown>): Promise<PublishError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(PublishError);
  return error as PublishError;
}

describe('rabbitmq publisher: wire format', () => {
  it('sends the payload JSON as the body and id, type, key, correlation id and time as AMQP properties and headers', async () => {
    const fx = await exchangeFixture();
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange });
    const createdAt = new Date('2024-05-06T07:08:09.500Z');
    const message = testMessage(fx.topic('orders'), { createdAt, headers: { 'correlation-id': 'corr-9', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
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
    expect(error.message).toMatch(/nacked/);
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
    const outcomes = await Promise.allSettled(Array.from({ length: 64 }, () => publisher.publish(testMessage(fx.topic('stuck'), { key: null, body: payloadJson }))));
    // Bounded, not hung: every one ends by the confirm timeout (the code below says which bound ended it);
    // the margin over 1.5 s is for a loaded machine.
    expect(Date.now() - started).toBeLessThan(20_000);
    const errors = outcomes.map((o) => (o as PromiseRejectedResult).reason as PublishError);
    for (const error of errors) expect(error.code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    const heldBack = errors.filter((e) => /backpressure/.test(e.message)).length;
    expect(heldBack).toBeGreaterThan(0); // never written: they waited for 'drain'
    expect(heldBack).toBeLessThan(errors.length); // the ones before the buffer filled were sent
  });
});

describe('rabbitmq publisher: connection faults', () => {
  it('fails in-flight publishes quickly when the broker closes the connection, then reconnects on the next publish', async () => {
    const fx = await exchangeFixture();
    const clientName = uniqueName('ox_forced');
    // A confirm timeout far beyond every wait below: a failure that comes at all came from the close.
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange, clientName, confirmTimeoutMs: 120_000 });
    await publisher.publish(testMessage(fx.topic('warm')));
    // Keep a steady stream in flight while the broker closes the connection under it.
    const failures: { error: unknown; at: number }[] = [];
    let published = 0;
    let stop = false;
    const stream = async (): Promise<void> => {
      while (!stop) {
        try {
          await publisher.publish(testMessage(fx.topic('stream'), { key: null }));
          published++;
        } catch (error) {
          failures.push({ error, at: Date.now() });
          return;
        }
      }
    };
    const streams = Array.from({ length: 50 }, stream);
    await waitFor(() => (published > 200 ? true : undefined), 10_000, 'the stream to be flowing');
    const closedAt = Date.now();
    expect(await forceCloseConnectionsNamed(clientName)).toBe(1);
    // rabbitmqctl asks the broker to close the connection; a broker busy with a parallel test run may take
    // seconds to do it, so the wait is generous: it stays far below the 120 s confirm timeout.
    await waitFor(() => (failures.length > 0 ? true : undefined), 45_000, 'in-flight publishes to fail');
    stop = true;
    await Promise.all(streams);
    for (const { error, at } of failures) {
      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).permanent).toBe(false);
      expect((error as PublishError).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
      expect((error as PublishError).message).toMatch(/CONNECTION_FORCED/);
      expect(at - closedAt).toBeLessThan(60_000); // not the 120 s confirm timeout
    }
    // The next publish opens a new connection by itself.
    await publisher.publish(testMessage(fx.topic('after')));
    expect(await brokerConnectionsNamed(clientName)).toHaveLength(1);
  });

  it('fails in-flight publishes at once when the TCP connection is reset, and reconnects', async () => {
    const fx = await exchangeFixture();
    const proxy = track(await faultProxy());
    const publisher = publisherFor({ url: proxy.url(), exchange: fx.exchange, confirmTimeoutMs: 30_000 });
    await publisher.publish(testMessage(fx.topic('warm')));
    proxy.freezeDownstream(); // hold the confirms so that the publishes below are surely in flight
    const pending = Array.from({ length: 20 }, () => publisher.publish(testMessage(fx.topic('cut'))));
    await fx.waitForDeliveries(21); // they reached the broker; only the confirms are held
    const cutAt = Date.now();
    proxy.cut();
    const outcomes = await Promise.allSettled(pending);
    expect(Date.now() - cutAt).toBeLessThan(15_000); // at the reset, not at the 30 s confirm timeout
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason as PublishError;
      expect(error).toBeInstanceOf(PublishError);
      expect(error.code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
      expect(error.permanent).toBe(false);
    }
    await publisher.publish(testMessage(fx.topic('after')));
    expect(proxy.connections()).toBe(1);
  });

  it('times out a publish whose confirm never comes, with a retryable PUBLISH_TIMEOUT', async () => {
    const fx = await exchangeFixture();
    const proxy = track(await faultProxy());
    const publisher = publisherFor({ url: proxy.url(), exchange: fx.exchange, confirmTimeoutMs: 800, heartbeatSeconds: 0, connectTimeoutMs: 1000 });
    await publisher.publish(testMessage(fx.topic('warm')));
    proxy.freezeDownstream();
    const started = Date.now();
    const error = await failureOf(publisher.publish(testMessage(fx.topic('lost-confirm'))));
    const elapsed = Date.now() - started;
    expect(error.code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    expect(error.permanent).toBe(false);
    expect(error.message).toMatch(/confirm never came/);
    expect(elapsed).toBeGreaterThanOrEqual(790);
    expect(elapsed).toBeLessThan(15_000); // ended by the timer, with room for a loaded machine
  });

  it('notices a silently dead connection by heartbeat and fails its publishes long before the confirm timeout', async () => {
    const fx = await exchangeFixture();
    const proxy = track(await faultProxy());
    const publisher = publisherFor({ url: proxy.url(), exchange: fx.exchange, confirmTimeoutMs: 30_000, heartbeatSeconds: 1, connectTimeoutMs: 2_000 });
    await publisher.publish(testMessage(fx.topic('warm')));
    proxy.freezeAll();
    const started = Date.now();
    const error = await failureOf(publisher.publish(testMessage(fx.topic('dead-network'))));
    expect(error.code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
    expect(error.message).toMatch(/Heartbeat timeout/);
    expect(Date.now() - started).toBeLessThan(20_000); // by heartbeat, not by the 30 s confirm timeout
  });

  it('rejects within connectTimeoutMs when the server accepts TCP and never answers; concurrent publishes share one attempt', async () => {
    const server = track(await silentServer());
    const publisher = publisherFor({ url: `amqp://guest:guest@127.0.0.1:${server.port}`, connectTimeoutMs: 500, confirmTimeoutMs: 30_000 });
    expect(server.accepted()).toBe(0); // lazy: creating the publisher connects nowhere
    const started = Date.now();
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => publisher.publish(testMessage('orders.hung'))));
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(15_000); // by the 500 ms connect bound, far from the 30 s confirm timeout
    for (const outcome of outcomes) {
      const error = (outcome as PromiseRejectedResult).reason as PublishError;
      expect(error).toBeInstanceOf(PublishError);
      expect(error.code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
      expect(error.permanent).toBe(false);
    }
    expect(server.accepted()).toBe(1);
  });

  it('bounds a publish by confirmTimeoutMs even while the connection attempt is still running', async () => {
    const server = track(await silentServer());
    const publisher = publisherFor({ url: `amqp://guest:guest@127.0.0.1:${server.port}`, connectTimeoutMs: 10_000, confirmTimeoutMs: 300 });
    const error = await failureOf(publisher.publish(testMessage('orders.hung')));
    expect(error.code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    expect(error.message).toMatch(/waiting for a connection/);
  });
});

describe('rabbitmq publisher: message size', () => {
  it('fails a message over maxMessageBytes permanently, without a round trip, and reports the limit', async () => {
    const server = track(await silentServer());
    const publisher = publisherFor({ url: `amqp://guest:guest@127.0.0.1:${server.port}`, maxMessageBytes: 1024 });
    expect(publisher.capabilities.maxMessageBytes).toBe(1024);
    const error = await failureOf(publisher.publish(testMessage('orders.big', { body: JSON.stringify('x'.repeat(2000)) })));
    expect(error.code).toBe('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect(error.permanent).toBe(true);
    expect(server.accepted()).toBe(0);
  });

  it("turns the broker's max_message_size refusal into a permanent error and keeps publishing", async () => {
    const fx = await exchangeFixture();
    const limit = await brokerMaxMessageSize();
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange, confirmTimeoutMs: 30_000 });
    await publisher.publish(testMessage(fx.topic('warm')));
    const huge = testMessage(fx.topic('huge'), { body: `"${'x'.repeat(limit - 1)}"` }); // limit + 1 bytes
    const error = await failureOf(publisher.publish(huge));
    expect(error.code).toBe('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect(error.permanent).toBe(true);
    expect(error.message).toContain(`${limit + 1} bytes`);
    await publisher.publish(testMessage(fx.topic('after-huge')));
    await fx.waitForDeliveries(2);
  });

  it('fails a message whose headers AMQP cannot encode permanently, and the channel stays usable', async () => {
    const fx = await exchangeFixture();
    const proxy = track(await faultProxy());
    const publisher = publisherFor({ url: proxy.url(), exchange: fx.exchange });
    await publisher.publish(testMessage(fx.topic('warm')));
    const headers = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`h${i}`, 'v'.repeat(4000)]));
    const error = await failureOf(publisher.publish(testMessage(fx.topic('fat-headers'), { headers })));
    expect(error.code).toBe('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect(error.permanent).toBe(true);
    await publisher.publish(testMessage(fx.topic('after')));
    expect(proxy.connections()).toBe(1); // same connection: nothing was written, nothing broke
  });
});

describe('rabbitmq publisher: close', () => {
  it('waits for in-flight confirms, closes its connection, refuses later publishes, and closes twice', async () => {
    const fx = await exchangeFixture();
    const clientName = uniqueName('ox_close');
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange, clientName });
    await publisher.publish(testMessage(fx.topic('warm')));
    const inFlight = Array.from({ length: 300 }, () => publisher.publish(testMessage(fx.topic('closing'), { key: null })));
    const closed = publisher.close();
    await expect(Promise.all(inFlight)).resolves.toHaveLength(300);
    await closed;
    await expect(publisher.close()).resolves.toBeUndefined();
    const error = await publisher.publish(testMessage(fx.topic('late'))).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxerError);
    expect((error as OutboxerError).code).toBe('OUTBOXER_CLOSED');
    await waitFor(async () => ((await brokerConnectionsNamed(clientName)).length === 0 ? true : undefined), 10_000, 'the connection to go');
    await fx.waitForDeliveries(301);
  });

  it('closes promptly while a connection attempt hangs', async () => {
    const server = track(await silentServer());
    const publisher = createRabbitMqPublisher({ url: `amqp://guest:guest@127.0.0.1:${server.port}`, connectTimeoutMs: 10_000, confirmTimeoutMs: 200 });
    await failureOf(publisher.publish(testMessage('orders.hung')));
    const started = Date.now();
    await publisher.close();
    expect(Date.now() - started).toBeLessThan(5_000); // not the 10 s connect timeout
  });
});

describe('rabbitmq publisher: secrets', () => {
  it('never shows the password in errors or logs, whatever fails', async () => {
    const secret = `canary-${Math.random().toString(36).slice(2)}`;
    const logger = recordingLogger();
    const errors: unknown[] = [];
    const collect = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => errors.push(e));
    // wrong password against the real broker
    const refused = publisherFor({ url: `amqp://guest:${secret}@${new URL(services.amqpUrl).host}`, logger, connectTimeoutMs: 5_000 });
    await collect(refused.publish(testMessage('orders.auth')));
    // nothing listening
    const nobody = publisherFor({ url: `amqp://guest:${secret}@127.0.0.1:${await closedPort()}`, logger, connectTimeoutMs: 1_000 });
    await collect(nobody.publish(testMessage('orders.nobody')));
    // a hung server
    const server = track(await silentServer());
    const hung = publisherFor({ url: `amqp://guest:${secret}@127.0.0.1:${server.port}`, logger, connectTimeoutMs: 300 });
    await collect(hung.publish(testMessage('orders.hung')));
    // invalid options that carry the URL
    errors.push(captureThrow(() => createRabbitMqPublisher({ url: `http://guest:${secret}@127.0.0.1`, logger })));
    errors.push(captureThrow(() => createRabbitMqPublisher({ url: `amqp://guest:${secret}@127.0.0.1`, confirmTimeoutMs: -1 })));
    errors.push(captureThrow(() => createRabbitMqPublisher({ url: `amqp://guest:${secret}@127.0.0.1?heartbeat=abc` })));
    expect(errors).toHaveLength(6);
    expect((errors[0] as PublishError).message).toMatch(/ACCESS_REFUSED/);
    for (const error of errors) {
      expect(error).toBeInstanceOf(OutboxerError);
      for (const text of [String((error as Error).message), String((error as Error).stack), JSON.stringify(error), String((error as Error).cause)]) {
        expect(text).not.toContain(secret);
      }
    }
    expect(logger.lines.length).toBeGreaterThan(0);
    expect(logger.lines.join('\n')).not.toContain(secret);
    const resolved = resolveRabbitMqPublisherOptions({ url: `amqp://guest:${secret}@127.0.0.1` });
    expect(JSON.stringify(resolved)).not.toContain(secret);
    expect(resolved.url).toContain(secret); // the driver still gets it
  });
});

function captureThrow(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('rabbitmq publisher: options', () => {
  const url = 'amqp://guest:guest@127.0.0.1:5672';

  it('resolves documented defaults, frozen', () => {
    const resolved = resolveRabbitMqPublisherOptions({ url });
    expect(resolved).toMatchObject({ ...RABBITMQ_PUBLISHER_DEFAULTS, maxMessageBytes: undefined, redactedUrl: 'amqp://***:***@127.0.0.1:5672' });
    expect(resolved.url).toBe(`${url}?heartbeat=10`);
    expect(resolved.clientName).toMatch(/^outboxer@/);
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(resolveRabbitMqPublisherOptions({ url: `${url}/?heartbeat=30` }).heartbeatSeconds).toBe(30);
    expect(resolveRabbitMqPublisherOptions({ url: `${url}/?heartbeat=30`, heartbeatSeconds: 5 }).url).toContain('heartbeat=5');
    const publisher = createRabbitMqPublisher({ url });
    expect(publisher.name).toBe('rabbitmq');
    expect(publisher.capabilities).toEqual({});
    expect(Object.isFrozen(publisher.capabilities)).toBe(true);
  });

  it.each<[string, Record<string, unknown>]>([
    ['url', {}],
    ['url', { url: '' }],
    ['url', { url: 'not a url' }],
    ['url', { url: 'http://127.0.0.1' }],
    ['url', { url: 'amqp://127.0.0.1?heartbeat=99999' }],
    ['exchange', { url, exchange: '' }],
    ['exchange', { url, exchange: 'x'.repeat(256) }],
    ['exchange', { url, exchange: 'bad\nname' }],
    ['exchange', { url, exchange: 42 }],
    ['exchangeType', { url, exchangeType: 'round-robin' }],
    ['declareExchange', { url, declareExchange: 'yes' }],
    ['confirmTimeoutMs', { url, confirmTimeoutMs: 0 }],
    ['confirmTimeoutMs', { url, confirmTimeoutMs: 1.5 }],
    ['confirmTimeoutMs', { url, confirmTimeoutMs: 2 ** 31 }],
    ['connectTimeoutMs', { url, connectTimeoutMs: '1000' }],
    ['heartbeatSeconds', { url, heartbeatSeconds: -1 }],
    ['maxMessageBytes', { url, maxMessageBytes: 0 }],
    ['maxMessageBytes', { url, maxMessageBytes: 2 ** 30 }],
    ['logger', { url, logger: console.log }],
    ['clientName', { url, clientName: '' }],
    ['confirmTimeout', { url, confirmTimeout: 5 }],
  ])('refuses an invalid %s: %j', (option, input) => {
    const error = captureThrow(() => createRabbitMqPublisher(input as unknown as RabbitMqPublisherOptions));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
    expect((error as ConfigurationError).message).toContain(`option ${option}`);
  });

  it('accepts plugin exchange types and heartbeat 0', () => {
    expect(resolveRabbitMqPublisherOptions({ url, exchangeType: 'x-delayed-message', heartbeatSeconds: 0 })).toMatchObject({ exchangeType: 'x-delayed-message', heartbeatSeconds: 0 });
  });
});
