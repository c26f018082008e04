import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import { settle } from '../support/captured-errors.js';
import { natsHarness, waitForStream } from '../support/nats-harness.js';
import { natsPublisherFixtures } from '../support/nats-publisher-fixtures.js';
import { uniqueName } from '../support/services.js';

describePublisherConformance(natsHarness);

describe('NATS publisher', () => {
  const { admin, isolatedStream, local } = natsPublisherFixtures();

  it('puts the message on the wire as documented: subject, body, Nats-Msg-Id and Outbox-* headers', async () => {
    const { prefix, stream } = await isolatedStream();
    const publisher = local();
    const keyed = testMessage(`${prefix}.orders.created`, {
      headers: { 'correlation-id': 'c-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    const plain = testMessage(`${prefix}.orders.plain`, { key: null, headers: {} });
    await publisher.publish(keyed);
    await publisher.publish(plain);
    const [first, second] = await waitForStream(admin, stream, 2);
    expect(first).toEqual({
      id: keyed.id,
      topic: keyed.topic,
      type: 'order.created',
      key: 'order-1',
      body: keyed.body,
      bytes: expect.any(Uint8Array),
      contentType: 'application/json',
      headers: {
        'correlation-id': 'c-1',
        traceparent: keyed.headers.traceparent,
        'Nats-Msg-Id': keyed.id,
        'Outbox-Id': keyed.id,
        'Outbox-Type': 'order.created',
        'Outbox-Key': 'order-1',
        'Content-Type': 'application/json',
      },
    });
    expect(second?.key).toBeNull();
    expect(second?.headers).not.toHaveProperty('Outbox-Key');
    expect(second?.headers['Outbox-Id']).toBe(plain.id);
  });

  it('treats a duplicate PubAck as success: the stream keeps one copy (murmur #141)', async () => {
    const { prefix, stream } = await isolatedStream({ duplicate_window: 60_000_000_000 });
    const publisher = local();
    const message = testMessage(`${prefix}.dup`);
    await publisher.publish(message);
    await expect(publisher.publish(message)).resolves.toBeUndefined();
    await expect(publisher.publish({ ...message, attempts: 3 })).resolves.toBeUndefined();
    const info = await admin.jsm.streams.info(stream);
    expect(info.state.messages).toBe(1);
  });

  it('applies subjectPrefix in front of the topic', async () => {
    const { prefix, stream } = await isolatedStream();
    const publisher = local({ subjectPrefix: `${prefix}.tenant-a` });
    const message = testMessage('orders.created');
    await publisher.publish(message);
    const [received] = await waitForStream(admin, stream, 1);
    expect(received?.topic).toBe(`${prefix}.tenant-a.orders.created`);
    expect(received?.id).toBe(message.id);
  });

  it('fails with a retryable OUTBOXER_NO_STREAM that names the subject when no stream captures it', async () => {
    const publisher = local();
    const subject = `${uniqueName('nostream')}.orders`;
    const error = await settle(publisher.publish(testMessage(subject)));
    expect(error).toBeInstanceOf(PublishError);
    expect((error as PublishError).code).toBe('OUTBOXER_NO_STREAM');
    expect((error as PublishError).permanent).toBe(false);
    expect((error as Error).message).toContain(`"${subject}"`);
    expect((error as Error).message).toMatch(/create a stream/);
  });

  it('refuses permanently what NATS cannot carry or JetStream would act on', async () => {
    const { prefix, stream } = await isolatedStream();
    const publisher = local();
    const cases = [
      testMessage(`${prefix}.x`, { headers: { 'Nats-Rollup': 'all' } }),
      testMessage(`${prefix}.x`, { headers: { 'nats-expected-stream': 'other' } }),
      testMessage(`${prefix}.x`, { headers: { 'bad name': 'v' } }),
      testMessage(`${prefix}.x`, { headers: { ok: 'line\nbreak' } }),
      testMessage(`${prefix}..x`),
      testMessage(`${prefix}.*`),
      testMessage(`${prefix}.>`),
      testMessage('$JS.API.STREAM.DELETE.x'),
      testMessage(`${prefix}.x y`),
    ];
    for (const message of cases) {
      const error = await settle(publisher.publish(message));
      expect(error, JSON.stringify({ topic: message.topic, headers: message.headers })).toBeInstanceOf(PublishError);
      expect((error as PublishError).permanent).toBe(true);
    }
    expect((await admin.jsm.streams.info(stream)).state.messages).toBe(0);
  });

  it('lets its own Outbox-* and Content-Type headers win over message headers of the same name', async () => {
    const { prefix, stream } = await isolatedStream();
    const message = testMessage(`${prefix}.x`, { headers: { 'outbox-id': 'forged', 'Content-Type': 'text/plain', tenant: 'acme' } });
    await local().publish(message);
    const [received] = await waitForStream(admin, stream, 1);
    expect(received?.headers).toMatchObject({ 'Outbox-Id': message.id, 'Content-Type': 'application/json', tenant: 'acme' });
    expect(received?.headers).not.toHaveProperty('outbox-id');
  });
});
