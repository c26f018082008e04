import { describe, expect, it } from 'vitest';
import { ConfigurationError, OutboxerError, type PublishError } from '../../src/core/errors.js';
import {
  createRabbitMqPublisher,
  RABBITMQ_PUBLISHER_DEFAULTS,
  resolveRabbitMqPublisherOptions,
  type RabbitMqPublisherOptions,
} from '../../src/brokers/rabbitmq/index.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { captureThrow, failureOf } from '../support/captured-errors.js';
import { brokerConnectionsNamed, brokerMaxMessageSize, closedPort, faultProxy, recordingLogger, silentServer, waitFor } from '../support/rabbitmq-harness.js';
import { rabbitMqPublisherFixtures } from '../support/rabbitmq-publisher-fixtures.js';
import { services, uniqueName } from '../support/services.js';

const { track, exchangeFixture, publisherFor } = rabbitMqPublisherFixtures();

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
    const error = await publisher.publish(testMessage(fx.topic('late'))).then(
      () => undefined,
      (e: unknown) => e,
    );
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
    const collect = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (e: unknown) => errors.push(e),
      );
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
    expect(resolveRabbitMqPublisherOptions({ url, exchangeType: 'x-delayed-message', heartbeatSeconds: 0 })).toMatchObject({
      exchangeType: 'x-delayed-message',
      heartbeatSeconds: 0,
    });
  });
});
