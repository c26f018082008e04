import { afterEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { failureAction } from '../../src/core/publish-failure.js';
import type { Publisher } from '../../src/core/ports.js';
import { createMqttPublisher, type MqttPublisherOptions } from '../../src/brokers/mqtt/index.js';
import { toMqttPublication } from '../../src/brokers/mqtt/wire.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { PrivateMosquitto, recordTopics, type MqttRecorder, type PrivateMosquittoConfig } from '../support/mqtt-harness.js';
import { recordingLogger } from '../support/nats-harness.js';
import { services } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const failure = (error: unknown) => (error instanceof PublishError ? { code: error.code, permanent: error.permanent, action: failureAction(error) } : error);

describe('MQTT publisher against a broker that refuses, limits, freezes or dies', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const broker = async (config: PrivateMosquittoConfig = {}): Promise<PrivateMosquitto> => {
    const server = await PrivateMosquitto.create(config);
    cleanups.push(() => server.destroy());
    await server.start();
    return server;
  };
  const make = (options: MqttPublisherOptions): Publisher => {
    const publisher = createMqttPublisher({ publishTimeoutMs: 3000, connectTimeoutMs: 2000, ...options });
    cleanups.push(() => publisher.close());
    return publisher;
  };
  const record = async (url: string, filter: string, auth: { username?: string; password?: string } = {}): Promise<MqttRecorder> => {
    const recorder = await recordTopics(filter, { url: withAuth(url, auth) });
    cleanups.push(() => recorder.close());
    return recorder;
  };

  it('verify() fails with AUTH_FAILED on a wrong password, names the fix and never shows the password; the right one connects', async () => {
    const server = await broker({ users: { relay: 'right-password' } });
    const logger = recordingLogger();
    const wrong = make({ url: `mqtt://relay:wrong-canary@127.0.0.1:${server.port}`, logger });
    const error = await wrong.verify?.().catch((e: unknown) => e);
    expect(failure(error)).toEqual({ code: 'OUTBOXER_AUTH_FAILED', permanent: false, action: 'release' });
    expect((error as Error).message).toMatch(/CONNACK 0x87 not authorized.*check the username and password/);
    expect(`${(error as Error).message}${(error as Error).stack}${JSON.stringify(error)}${logger.lines.join('\n')}`).not.toContain('wrong-canary');
    expect(wrong.connectionState?.()).toBe('disconnected');
    const right = make({ url: `mqtt://127.0.0.1:${server.port}`, username: 'relay', password: 'right-password' });
    await right.verify?.();
    expect(right.connectionState?.()).toBe('connected');
  });

  it('a topic the ACL closes to the relay fails with PUBACK 0x87 as UNROUTABLE (the topic pauses), while an allowed topic is confirmed on the same connection', async () => {
    const server = await broker({ users: { relay: 'pw', reader: 'pw' }, acl: ['user relay', 'topic write allowed/#', 'user reader', 'topic read #'] });
    const recorder = await record(server.url, '#', { username: 'reader', password: 'pw' });
    const publisher = make({ url: `mqtt://relay:pw@127.0.0.1:${server.port}` });
    const denied = testMessage('forbidden.orders');
    const error = await publisher.publish(denied).catch((e: unknown) => e);
    expect(failure(error)).toEqual({ code: 'OUTBOXER_UNROUTABLE', permanent: false, action: 'pause-topic' });
    expect((error as Error).message).toContain(`message ${denied.id} on topic "forbidden/orders" with PUBACK 0x87 not authorized`);
    const allowed = testMessage('allowed.orders');
    await publisher.publish(allowed);
    const deliveries = await recorder.waitFor(1);
    expect(deliveries.map((d) => d.id)).toEqual([allowed.id]);
  });

  it("learns the broker's Maximum Packet Size: a PUBLISH of exactly that size is confirmed, one byte more fails permanently without being sent", async () => {
    const limit = 2000;
    const server = await broker({ maxPacketSize: limit });
    const recorder = await record(server.url, 'sized/#');
    const publisher = make({ url: server.url });
    expect(publisher.capabilities.maxMessageBytes).toBeUndefined();
    await publisher.verify?.();
    expect(publisher.capabilities.maxMessageBytes).toBe(limit);
    const sized = (extra: number) => {
      const probe = testMessage('sized.m', { body: '' });
      const overhead = toMqttPublication(probe, undefined).packetBytes;
      return testMessage('sized.m', { id: probe.id, body: 'x'.repeat(limit - overhead + extra) });
    };
    const fits = sized(0);
    expect(toMqttPublication(fits, undefined).packetBytes).toBe(limit);
    await publisher.publish(fits);
    const error = await publisher.publish(sized(1)).catch((e: unknown) => e);
    expect(failure(error)).toEqual({ code: 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', permanent: true, action: 'dead' });
    // the connection survived (an oversize PUBLISH would have made Mosquitto disconnect): one more goes through
    const after = testMessage('sized.after');
    await publisher.publish(after);
    expect((await recorder.waitFor(2)).map((d) => d.id)).toEqual([fits.id, after.id]);
    expect(publisher.connectionState?.()).toBe('connected');
  });

  it("keeps within the broker's Receive Maximum: 300 concurrent publishes to a broker allowing 3 in flight are all confirmed", async () => {
    const server = await broker({ maxInflightMessages: 3 });
    const recorder = await record(server.url, 'window/#');
    const publisher = make({ url: server.url, publishTimeoutMs: 20_000 });
    const messages = Array.from({ length: 300 }, (_, i) => testMessage('window.m', { key: `k${i}` }));
    await Promise.all(messages.map((m) => publisher.publish(m)));
    const deliveries = await recorder.waitFor(300);
    expect(new Set(deliveries.map((d) => d.id))).toEqual(new Set(messages.map((m) => m.id)));
  });

  it('sends no more than the Receive Maximum before PUBACKs come: to a frozen broker allowing 3, 3 of 10 publishes go out and 7 wait for room', async () => {
    const server = await broker({ maxInflightMessages: 3 });
    const publisher = make({ url: server.url, publishTimeoutMs: 1000 });
    await publisher.verify?.();
    await server.freeze();
    cleanups.push(async () => server.thaw());
    const messages = Array.from({ length: 10 }, (_, i) => testMessage('window.m', { key: `k${i}` }));
    const errors = await Promise.all(
      messages.map((m) =>
        publisher.publish(m).then(
          () => new Error('confirmed'),
          (e: unknown) => e as Error,
        ),
      ),
    );
    const stages = errors.map((e) => (e.message.includes('PUBACK never came') ? 'sent' : e.message.includes('Receive Maximum') ? 'waited' : e.message));
    expect(stages.filter((s) => s === 'sent')).toHaveLength(3);
    expect(stages.filter((s) => s === 'waited')).toHaveLength(7);
    // the kernel's count: exactly three PUBLISH packets wait, unread, for the frozen broker
    expect(server.unreadBytes()).toBe(3 * toMqttPublication(messages[0]!, undefined).packetBytes);
  });

  it('a frozen broker makes a publish fail with PUBLISH_TIMEOUT within publishTimeoutMs, not sit in the client', async () => {
    const server = await broker();
    const publisher = make({ url: server.url, publishTimeoutMs: 1000 });
    await publisher.verify?.();
    await server.freeze();
    cleanups.push(async () => server.thaw());
    const started = performance.now();
    const error = await publisher.publish(testMessage('frozen.m')).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(failure(error)).toEqual({ code: 'OUTBOXER_PUBLISH_TIMEOUT', permanent: false, action: 'retry' });
    expect((error as Error).message).toContain('sent, but the PUBACK never came');
  });

  it('a broker killed with publishes in flight fails them at once as BROKER_UNAVAILABLE; while it is down publishes fail fast; once back the idle publisher reconnects by itself', async () => {
    const server = await broker();
    const publisher = make({ url: server.url, publishTimeoutMs: 5000 });
    await publisher.verify?.();
    await server.freeze(); // nothing is acknowledged: the publishes stay in flight until the kill
    const inFlight = Array.from({ length: 20 }, () => publisher.publish(testMessage('killed.m')).catch((e: unknown) => e));
    const killedAt = performance.now();
    await server.kill();
    const errors = await Promise.all(inFlight);
    expect(performance.now() - killedAt).toBeLessThan(2000);
    expect(new Set(errors.map((e) => JSON.stringify(failure(e))))).toEqual(
      new Set([JSON.stringify({ code: 'OUTBOXER_BROKER_UNAVAILABLE', permanent: false, action: 'release' })]),
    );
    expect((errors[0] as Error).message).toMatch(/lost before its PUBACK.*same outbox-id/);
    expect(publisher.connectionState?.()).toBe('disconnected');

    const started = performance.now();
    const down = await publisher.publish(testMessage('killed.m')).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(failure(down)).toEqual({ code: 'OUTBOXER_BROKER_UNAVAILABLE', permanent: false, action: 'release' });

    await server.start();
    await waitFor(() => publisher.connectionState?.() === 'connected', { timeoutMs: 15_000, what: 'the background reconnect' });
    await publisher.publish(testMessage('killed.back'));
  });

  it('close() gives up publishes still waiting for a connection with OUTBOXER_CLOSED, and refuses new ones', async () => {
    const server = await broker();
    await server.freeze(); // the TCP connection opens, the CONNACK never comes
    cleanups.push(async () => server.thaw());
    const publisher = make({ url: server.url, connectTimeoutMs: 5000, publishTimeoutMs: 5000 });
    const waiting = publisher.publish(testMessage('closing.m')).catch((e: unknown) => e);
    const started = performance.now();
    await publisher.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(((await waiting) as PublishError).code).toBe('OUTBOXER_CLOSED');
    expect(((await publisher.publish(testMessage('closing.m')).catch((e: unknown) => e)) as PublishError).code).toBe('OUTBOXER_CLOSED');
  });

  it('a URL that points at another protocol fails verify() with WRONG_PROTOCOL (NATS answers with its INFO line)', async () => {
    const publisher = make({ url: services.natsUrl.replace(/^nats:/, 'mqtt:') });
    const error = await publisher.verify?.().catch((e: unknown) => e);
    expect(failure(error)).toEqual({ code: 'OUTBOXER_WRONG_PROTOCOL', permanent: false, action: 'release' });
    expect((error as Error).message).toMatch(/does not speak MQTT/);
  });
});

function withAuth(url: string, auth: { username?: string; password?: string }): string {
  if (auth.username === undefined) return url;
  const parsed = new URL(url);
  parsed.username = auth.username;
  parsed.password = auth.password ?? '';
  return parsed.toString();
}
