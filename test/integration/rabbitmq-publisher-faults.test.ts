import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { failureOf } from '../support/captured-errors.js';
import { brokerConnectionsNamed, faultProxy, forceCloseConnectionsNamed, silentServer, waitFor } from '../support/rabbitmq-harness.js';
import { rabbitMqPublisherFixtures } from '../support/rabbitmq-publisher-fixtures.js';
import { services, uniqueName } from '../support/services.js';

const { track, exchangeFixture, publisherFor } = rabbitMqPublisherFixtures();

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
    const streams = Array.from({ length: 10 }, stream); // enough to have publishes in flight at every instant
    await waitFor(() => (published > 200 ? true : undefined), 10_000, 'the stream to be flowing');
    const closedAt = Date.now();
    expect(await forceCloseConnectionsNamed(clientName)).toBe(1);
    // rabbitmqctl only asks the broker to close the connection. Under this test's own flood (thousands of
    // publishes a second) the broker now and then drops the request: seen here about once in 8 runs, with the
    // connection still listed and publishing 10 s later. So the close is asked again while it has not happened;
    // every wait stays far below the 120 s confirm timeout, so a failure still proves the close caused it.
    for (let ask = 1; failures.length === 0; ask++) {
      const failed = await waitFor(() => (failures.length > 0 ? true : undefined), 5_000, 'in-flight publishes to fail').catch(() => false);
      if (failed) break;
      if (ask >= 6) throw new Error(`the broker did not close connection ${clientName} after ${ask} requests`);
      await forceCloseConnectionsNamed(clientName);
    }
    stop = true;
    await Promise.all(streams);
    for (const { error, at } of failures) {
      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).permanent).toBe(false);
      expect((error as PublishError).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
      expect((error as PublishError).message).toMatch(/CONNECTION_FORCED/);
      expect(at - closedAt).toBeLessThan(90_000); // not the 120 s confirm timeout
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
