import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, OutboxerError, PublishError } from '../../src/core/errors.js';
import { failureAction } from '../../src/core/publish-failure.js';
import type { Publisher } from '../../src/core/ports.js';
import { createAmqp10Publisher } from '../../src/brokers/amqp10/index.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import { amqp10Harness, amqp10Publisher, amqp10Receiver, amqp10Url, isolatedAmqp10Target, toReceived } from '../support/amqp10-harness.js';
import { faultProxy, recordingLogger } from '../support/rabbitmq-harness.js';
import { uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

describePublisherConformance(amqp10Harness);

const run = promisify(execFile);
const AMQP_READER = fileURLToPath(new URL('../support/foreign/amqp_reader.py', import.meta.url));
/** Debian's own interpreter, where python3-pika is installed. */
const PYTHON = '/usr/bin/python3';

async function failureOf(promise: Promise<unknown>): Promise<PublishError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PublishError);
  return error as PublishError;
}

describe('amqp10 publisher on RabbitMQ 3.10 (rabbitmq_amqp1_0)', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function target(queueArguments: Record<string, unknown> = {}) {
    const made = await isolatedAmqp10Target(queueArguments);
    cleanups.push(() => made.cleanup());
    return made;
  }
  function track(publisher: Publisher): Publisher {
    cleanups.push(() => publisher.close());
    return publisher;
  }

  it('is read by pika over AMQP 0-9-1 as the exact bytes, with message-id, content-type, durability and the topic as routing key', async () => {
    const t = await target();
    const publisher = track(amqp10Publisher({ address: t.address }));
    const json = testMessage(t.topic('orders'), { body: '{"b": 1,  "a":"caf\\u00e9"}', contentType: 'application/vnd.acme+json' });
    const binary = testMessage(t.topic('orders'), { key: null, body: Uint8Array.from([0, 0xff, 0x80, 0x0a]), contentType: 'application/x-protobuf' });
    await publisher.publish(json);
    await publisher.publish(binary);
    const { stdout } = await run(PYTHON, [AMQP_READER, amqp10Url, t.queue, '2'], { timeout: 30_000 });
    const read = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(read).toEqual([
      expect.objectContaining({
        routing_key: json.topic,
        body_hex: Buffer.from(json.body as string).toString('hex'),
        content_type: 'application/vnd.acme+json',
        message_id: json.id,
        delivery_mode: 2,
      }),
      expect.objectContaining({
        routing_key: binary.topic,
        body_hex: '00ff800a',
        content_type: 'application/x-protobuf',
        message_id: binary.id,
        delivery_mode: 2,
      }),
    ]);
    // RabbitMQ 3.10 hands the application properties to 0-9-1 consumers as one AMQP 1.0-encoded section, not as headers.
    expect(Object.keys(read[0]?.headers as object)).toContain('x-amqp-1.0-app-properties');
  });

  it('carries type as subject, key as group-id, the headers plus outbox-type and outbox-key as application properties, to an AMQP 1.0 reader', async () => {
    const t = await target();
    const receiver = await amqp10Receiver(t.queue);
    cleanups.push(() => receiver.close());
    const publisher = track(amqp10Publisher({ address: t.address }));
    const message = testMessage(t.topic('props'), { headers: { 'correlation-id': 'corr-9', 'outbox-type': 'forged' } });
    await publisher.publish(message);
    const [raw] = await waitFor(() => (receiver.messages.length > 0 ? receiver.messages : undefined));
    expect(raw).toMatchObject({
      message_id: message.id,
      subject: 'order.created',
      group_id: 'order-1',
      correlation_id: 'corr-9',
      content_type: 'application/json',
      durable: true,
    });
    expect(raw?.application_properties).toEqual({ 'correlation-id': 'corr-9', 'outbox-type': 'order.created', 'outbox-key': 'order-1' });
    expect(toReceived(raw as NonNullable<typeof raw>, message.topic).body).toBe(message.body);
  });

  it('confirms 500 concurrent publishes to 5 addresses over one connection with maxSenders 2 (a busy link is never detached)', async () => {
    const t = await target();
    const receiver = await amqp10Receiver(t.queue);
    cleanups.push(() => receiver.close());
    const publisher = track(amqp10Publisher({ address: t.address, maxSenders: 2 }));
    const messages = Array.from({ length: 500 }, (_, i) => testMessage(t.topic(`bulk${i % 5}`), { key: `k${i % 11}` }));
    await Promise.all(messages.map((m) => publisher.publish(m)));
    await waitFor(() => receiver.messages.length >= 500, { what: '500 messages' });
    expect(new Set(receiver.messages.map((m) => String(m.message_id)))).toEqual(new Set(messages.map((m) => m.id)));
  });

  it('fails a missing exchange with OUTBOXER_UNROUTABLE (the relay pauses the topic), while other addresses keep publishing', async () => {
    const t = await target();
    const publisher = track(amqp10Publisher({ address: '/exchange/{topic}/x' }));
    const missing = uniqueName('ox10_missing');
    const error = await failureOf(publisher.publish(testMessage(missing)));
    expect(error.code).toBe('OUTBOXER_UNROUTABLE');
    expect(failureAction(error)).toBe('pause-topic');
    expect(error.message).toContain(`/exchange/${missing}/x`);
    await expect(publisher.publish(testMessage(t.exchange))).resolves.toBeUndefined();
    expect(publisher.connectionState?.()).toBe('connected');
  });

  it('is Accepted by RabbitMQ 3.10 even when no queue is bound for the topic (the gap docs/publishers/amqp10.md names)', async () => {
    const t = await target();
    const publisher = track(amqp10Publisher({ address: t.address }));
    const receiver = await amqp10Receiver(t.queue);
    cleanups.push(() => receiver.close());
    await expect(publisher.publish(testMessage(`${t.exchange}.nobody`))).resolves.toBeUndefined();
    const routed = testMessage(t.topic('somebody'));
    await publisher.publish(routed);
    await waitFor(() => receiver.messages.length > 0, { what: 'the routed message' });
    expect(receiver.messages.map((m) => String(m.message_id))).toEqual([routed.id]);
  });

  it('never reports as published a message the queue refused (x-overflow reject-publish)', async () => {
    const t = await target({ 'x-max-length': 1, 'x-overflow': 'reject-publish' });
    const publisher = track(amqp10Publisher({ address: t.address }));
    await publisher.publish(testMessage(t.topic('full')));
    // RabbitMQ 3.10's plugin does not turn the nack into a Rejected disposition: its session process crashes and the
    // connection drops. Either way the publish fails, and is retried without counting an attempt.
    const error = await failureOf(publisher.publish(testMessage(t.topic('full'))));
    expect(error.permanent).toBe(false);
    expect(['OUTBOXER_BROKER_UNAVAILABLE', 'OUTBOXER_PUBLISH_FAILED']).toContain(error.code);
  });

  it('refuses a wrong password with OUTBOXER_AUTH_FAILED, at verify and at publish, never showing it', async () => {
    const secret = `canary-${uniqueName('pw')}`;
    const logger = recordingLogger();
    const url = new URL(amqp10Url);
    url.password = secret;
    const publisher = track(createAmqp10Publisher({ url: url.toString(), address: '{topic}', connectTimeoutMs: 15_000, publishTimeoutMs: 20_000, logger }));
    const refused = await publisher.verify?.().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(PublishError);
    expect((refused as PublishError).code).toBe('OUTBOXER_AUTH_FAILED');
    const error = await failureOf(publisher.publish(testMessage('orders.auth')));
    expect(error.code).toBe('OUTBOXER_AUTH_FAILED');
    expect(publisher.connectionState?.()).toBe('disconnected');
    for (const text of [String(refused), (refused as Error).stack, JSON.stringify(refused), error.message, error.stack, ...logger.lines])
      expect(text).not.toContain(secret);
  }, 60_000);

  it('fails what is in flight when the connection drops, then reconnects in the background', async () => {
    const t = await target();
    const proxy = await faultProxy();
    cleanups.push(() => proxy.close());
    const publisher = track(createAmqp10Publisher({ url: proxy.url(), address: t.address, publishTimeoutMs: 5000 }));
    await publisher.verify?.();
    await publisher.publish(testMessage(t.topic('before')));
    proxy.cut();
    await waitFor(() => publisher.connectionState?.() === 'disconnected', { what: 'the loss to be seen' });
    await waitFor(() => publisher.connectionState?.() === 'connected', { what: 'the background reconnect', timeoutMs: 10_000 });
    await expect(publisher.publish(testMessage(t.topic('after')))).resolves.toBeUndefined();
  });

  it('times out a publish whose disposition never comes with OUTBOXER_PUBLISH_TIMEOUT', async () => {
    const t = await target();
    const proxy = await faultProxy();
    cleanups.push(() => proxy.close());
    const publisher = track(createAmqp10Publisher({ url: proxy.url(), address: t.address, publishTimeoutMs: 1000, connectTimeoutMs: 1000, idleTimeoutMs: 0 }));
    await publisher.publish(testMessage(t.topic('frozen')));
    proxy.freezeDownstream();
    const error = await failureOf(publisher.publish(testMessage(t.topic('frozen'))));
    expect(error.code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    expect(error.message).toContain('waiting for the disposition');
  });

  it('refuses a body over maxMessageBytes permanently, without a round trip', async () => {
    const publisher = track(amqp10Publisher({ address: '{topic}', maxMessageBytes: 8 }));
    const error = await failureOf(publisher.publish(testMessage('orders.big')));
    expect(error.code).toBe('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect(error.permanent).toBe(true);
    expect(publisher.capabilities.maxMessageBytes).toBe(8);
    expect(publisher.connectionState?.()).toBe('connecting');
  });

  it('refuses to publish or verify after close', async () => {
    const publisher = amqp10Publisher({ address: '{topic}' });
    await publisher.close();
    expect((await failureOf(publisher.publish(testMessage('orders.x')))).code).toBe('OUTBOXER_CLOSED');
    await expect(publisher.verify?.()).rejects.toBeInstanceOf(OutboxerError);
    expect(publisher.connectionState?.()).toBe('disconnected');
  });
});

describe('amqp10 publisher options', () => {
  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ['no url', {}, /option url: is required/],
    ['another scheme', { url: 'http://h' }, /option url: must start with amqp:\/\/ or amqps:\/\//],
    ['a path of two segments', { url: 'amqp://u:pw@h/a/b' }, /option url: must be amqp\[s\]:\/\/\[user:password@\]host\[:port\]\[\/vhost\] with no query/],
    ['a query', { url: 'amqp://u:pw@h?heartbeat=5' }, /option url: .* with no query or fragment/],
    ['an address without {topic}', { url: 'amqp://h', address: '/exchange/outbox' }, /option address: must contain \{topic\} exactly once/],
    ['an address with {topic} twice', { url: 'amqp://h', address: '{topic}/{topic}' }, /option address: must contain \{topic\} exactly once/],
    ['a zero timeout', { url: 'amqp://h', publishTimeoutMs: 0 }, /option publishTimeoutMs:/],
    ['a fractional timeout', { url: 'amqp://h', connectTimeoutMs: 1.5 }, /option connectTimeoutMs:/],
    ['no senders', { url: 'amqp://h', maxSenders: 0 }, /option maxSenders:/],
    ['an unknown option', { url: 'amqp://h', exchange: 'outbox' }, /option exchange: is not an option \(known: url, address/],
    ['a logger without methods', { url: 'amqp://h', logger: {} }, /option logger: must have debug, info, warn and error/],
  ];
  it.each(refusals)('refuses %s with OUTBOXER_INVALID_OPTION naming it', (_, options, message) => {
    let error: unknown;
    try {
      createAmqp10Publisher(options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
    expect((error as Error).message).toMatch(message);
  });

  it('never echoes a URL it cannot parse, nor its password', () => {
    expect(() => createAmqp10Publisher({ url: 'amqp://u:hunter2@[bad' })).toThrow(/value hidden/);
    expect(() => createAmqp10Publisher({ url: 'amqp://u:hunter2@[bad' })).not.toThrow(/hunter2/);
    expect(() => createAmqp10Publisher({ url: 'amqp://u:hunter2@h/a/b' })).not.toThrow(/hunter2/);
  });
});
