import { type AddressInfo, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { Publisher } from '../../src/core/ports.js';
import { failureAction } from '../../src/core/publish-failure.js';
import { createRedisPublisher, type RedisPublisherOptions } from '../../src/brokers/redis/index.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { settle } from '../support/captured-errors.js';
import { PrivateRedisServer, recordingLogger } from '../support/redis-harness.js';
import { waitFor } from '../support/wait-for.js';

/** Each test runs its own redis-server(s): these faults would disturb the shared one. */
describe('Redis publisher faults', () => {
  const servers: PrivateRedisServer[] = [];
  const publishers: Publisher[] = [];
  const server = async (args: readonly string[] = [], password?: string) => {
    const made = await PrivateRedisServer.create(args);
    servers.push(made);
    await made.start(password);
    return made;
  };
  const make = (options: RedisPublisherOptions) => {
    const publisher = createRedisPublisher({ publishTimeoutMs: 1500, connectTimeoutMs: 1000, ...options });
    publishers.push(publisher);
    return publisher;
  };
  afterEach(async () => {
    for (const s of servers) s.thaw();
    await Promise.all(publishers.splice(0).map((p) => p.close()));
    await Promise.all(servers.splice(0).map((s) => s.kill()));
  });

  it('maps a lost connection to OUTBOXER_BROKER_UNAVAILABLE, and publishes again once the server is back', async () => {
    const redis = await server();
    const publisher = make({ url: redis.url() });
    await publisher.publish(testMessage('orders.before'));
    expect(publisher.connectionState?.()).toBe('connected');
    await redis.kill();
    const error = await settle(publisher.publish(testMessage('orders.during')));
    expect(error).toBeInstanceOf(PublishError);
    expect((error as PublishError).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
    expect(failureAction(error)).toBe('release');
    await waitFor(() => publisher.connectionState?.() === 'disconnected', { what: 'the publisher to see the loss' });
    // sent while the client reconnects: never written, so never stored, and not a timeout that counts an attempt
    const waiting = await settle(publisher.publish(testMessage('orders.while-down')));
    expect((waiting as PublishError).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
    await redis.start();
    await waitFor(() => publisher.connectionState?.() === 'connected', { what: 'the client to reconnect by itself' });
    await publisher.publish(testMessage('orders.after'));
    expect(Number((await redis.cli(['XLEN', 'orders.after'])).trim())).toBe(1);
  });

  it('starts while Redis is down: verify() fails as unavailable, and the idle publisher connects in the background once it is up', async () => {
    const redis = await PrivateRedisServer.create();
    servers.push(redis);
    const publisher = make({ url: redis.url() });
    const error = await settle(publisher.verify?.() ?? Promise.resolve());
    expect((error as PublishError).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
    expect(publisher.connectionState?.()).toBe('disconnected');
    await redis.start();
    await waitFor(() => publisher.connectionState?.() === 'connected', { timeoutMs: 10_000, what: 'the background reconnect' });
  });

  it('fails as OUTBOXER_PUBLISH_TIMEOUT within publishTimeoutMs when the server stops answering', async () => {
    const redis = await server();
    const publisher = make({ url: redis.url(), publishTimeoutMs: 500 });
    await publisher.verify?.();
    redis.freeze();
    const started = performance.now();
    const error = await settle(publisher.publish(testMessage('orders.frozen')));
    const took = performance.now() - started;
    expect((error as PublishError).code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    expect(failureAction(error)).toBe('retry');
    expect((error as Error).message).toMatch(/may have been stored/);
    expect(took).toBeGreaterThanOrEqual(490);
    expect(took).toBeLessThan(1500);
  });

  it('maps OOM (maxmemory reached) to a retryable OUTBOXER_PUBLISH_FAILED', async () => {
    const redis = await server();
    await redis.cli(['SETRANGE', 'ballast', '2000000', 'x']); // a 2 MB string
    await redis.cli(['CONFIG', 'SET', 'maxmemory', '1mb']);
    const publisher = make({ url: redis.url() });
    const message = testMessage('orders.full');
    const error = await settle(publisher.publish(message));
    expect((error as PublishError).code).toBe('OUTBOXER_PUBLISH_FAILED');
    expect((error as PublishError).permanent).toBe(false);
    expect(failureAction(error)).toBe('retry');
    expect((error as Error).message).toMatch(new RegExp(`message ${message.id} was not stored: .*maxmemory`));
    await redis.cli(['CONFIG', 'SET', 'maxmemory', '0']);
    await expect(publisher.publish(message)).resolves.toBeUndefined();
  });

  it('maps refused credentials to OUTBOXER_AUTH_FAILED, at verify() and at publish, with no password shown', async () => {
    const redis = await server(['--requirepass', 'right-password'], 'right-password');
    const logger = recordingLogger();
    for (const url of [redis.url(':wrong-password-canary'), redis.url()]) {
      const publisher = make({ url, logger });
      const verified = await settle(publisher.verify?.() ?? Promise.resolve());
      expect((verified as PublishError).code).toBe('OUTBOXER_AUTH_FAILED');
      expect((verified as Error).message).toMatch(/refused the credentials.*check the user and password/);
      const published = await settle(publisher.publish(testMessage('orders.auth')));
      expect((published as PublishError).code).toBe('OUTBOXER_AUTH_FAILED');
      expect(failureAction(published)).toBe('release');
      expect(`${String(verified)}${String((published as Error).stack)}${logger.lines.join('\n')}`).not.toMatch(/wrong-password-canary|right-password/);
    }
    const good = make({ url: redis.url(':right-password') });
    await good.publish(testMessage('orders.auth'));
  });

  it('waitReplicas 1 is confirmed once a real replica has the entry', async () => {
    const primary = await server();
    const replica = await server(['--replicaof', '127.0.0.1', String(primary.port)]);
    await waitFor(async () => (await replica.cli(['INFO', 'replication'])).includes('master_link_status:up'), { what: 'the replica to sync' });
    const publisher = make({ url: primary.url(), waitReplicas: 1, waitTimeoutMs: 1000, publishTimeoutMs: 3000 });
    const messages = Array.from({ length: 200 }, (_, i) => testMessage('orders.replicated', { key: `k${i % 5}` }));
    await Promise.all(messages.map((m) => publisher.publish(m)));
    // WAIT answered: the replica holds every entry already, no polling needed
    expect(Number((await replica.cli(['XLEN', 'orders.replicated'])).trim())).toBe(200);
  });

  it('refuses a database the server does not have, and a port that does not speak RESP, as OUTBOXER_WRONG_PROTOCOL', async () => {
    const redis = await server();
    const noDatabase = make({ url: `${redis.url()}/99` });
    const error = await settle(noDatabase.verify?.() ?? Promise.resolve());
    expect((error as PublishError).code).toBe('OUTBOXER_WRONG_PROTOCOL');
    expect((error as Error).message).toMatch(/no such database.*fix the \/<db> of the URL/);

    const http = createServer((socket) => socket.write('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const port = (http.address() as AddressInfo).port;
      const notRedis = make({ url: `redis://127.0.0.1:${port}` });
      const refused = await settle(notRedis.verify?.() ?? Promise.resolve());
      expect(refused).toBeInstanceOf(PublishError);
      expect((refused as PublishError).code).toBe('OUTBOXER_WRONG_PROTOCOL');
      expect((refused as Error).message).toMatch(/does not speak RESP.*is that Redis's port/);
    } finally {
      http.close();
    }
  });
});
