import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutboxerError, PublishError } from '../../src/core/errors.js';
import { newMessageId } from '../../src/core/ids.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher } from '../../src/core/ports.js';

/** A message as a consumer in any language reads it off the broker. */
export interface ReceivedMessage {
  readonly id: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  /** The raw body as UTF-8 text: must be the payload JSON itself. */
  readonly body: string;
  /** The raw body bytes. */
  readonly bytes: Uint8Array;
  /** The content type the broker delivery names. */
  readonly contentType: string | undefined;
}

export interface PublisherEnvironment {
  readonly publisher: Publisher;
  /** Topics whose publishes the broker accepts, isolated to this test. */
  topic(suffix: string): string;
  /**
   * A topic the broker cannot deliver anywhere (no bound queue, no stream): publishing it must fail. `null`
   * where the broker has no such failure (a Redis stream or an MQTT topic is made by its first publish):
   * the suite then checks that such a publish is confirmed.
   */
  readonly unroutableTopic: string | null;
  /** Waits until at least `count` messages arrived, or fails after `timeoutMs`. */
  waitForMessages(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  cleanup(): Promise<void>;
}

export interface PublisherHarness {
  readonly name: string;
  /** A publisher and isolated broker resources (own exchange and queue, own stream) for one test. */
  setup(): Promise<PublisherEnvironment>;
  /** A publisher pointed at a broker that does not answer, with `secret` as its password. */
  unreachable(secret: string): Promise<Publisher>;
}

export function testMessage(topic: string, overrides: Partial<OutboxMessage> = {}): OutboxMessage {
  return {
    id: newMessageId(),
    seq: '1',
    topic,
    type: 'order.created',
    key: 'order-1',
    body: JSON.stringify({ orderId: 1, total: 12.5, note: 'ünïcode ✓' }),
    contentType: 'application/json',
    headers: { 'correlation-id': 'corr-1', tenant: 'acme' },
    createdAt: new Date(),
    attempts: 1,
    lastError: null,
    ...overrides,
  };
}

/** The behaviour every broker publisher shares; each publisher's test file runs it against the real broker. */
export function describePublisherConformance(harness: PublisherHarness): void {
  describe(`${harness.name} publisher conformance`, () => {
    let env: PublisherEnvironment;
    beforeEach(async () => {
      env = await harness.setup();
    });
    afterEach(async () => {
      await env.cleanup();
    });

    it('delivers the payload JSON as the body and id, type, key and headers as broker properties', async () => {
      const message = testMessage(env.topic('orders'));
      await env.publisher.publish(message);
      const [received] = await env.waitForMessages(1);
      expect(received).toBeDefined();
      expect(received?.body).toBe(message.body);
      expect(received?.id).toBe(message.id);
      expect(received?.type).toBe(message.type);
      expect(received?.key).toBe(message.key);
      expect(received?.topic).toBe(message.topic);
      expect(received?.headers).toMatchObject(message.headers);
    });

    it('delivers the stored body byte for byte with its content type: JSON text as written, binary bytes', async () => {
      const json = testMessage(env.topic('exact'), { body: '{"b": 1,  "a":"caf\\u00e9", "n": 1e3}', contentType: 'application/vnd.acme+json' });
      const binary = testMessage(env.topic('exact'), { key: 'order-2', body: Uint8Array.from([0, 0xff, 0x80, 0x0a]), contentType: 'application/x-protobuf' });
      await env.publisher.publish(json);
      await env.publisher.publish(binary);
      const received = await env.waitForMessages(2);
      const byId = new Map(received.map((r) => [r.id, r]));
      expect([...(byId.get(json.id)?.bytes ?? [])]).toEqual([...Buffer.from(json.body as string, 'utf8')]);
      expect(byId.get(json.id)?.contentType).toBe('application/vnd.acme+json');
      expect([...(byId.get(binary.id)?.bytes ?? [])]).toEqual([0, 0xff, 0x80, 0x0a]);
      expect(byId.get(binary.id)?.contentType).toBe('application/x-protobuf');
    });

    it('carries a UTF-8 key and header values that a consumer reads back unchanged', async () => {
      const message = testMessage(env.topic('utf8'), { key: 'Kunde Müller 7', headers: { tenant: 'Müller GmbH', note: '50% "off"' } });
      await env.publisher.publish(message);
      const [received] = await env.waitForMessages(1);
      expect(received?.key).toBe('Kunde Müller 7');
      expect(received?.headers).toMatchObject({ tenant: 'Müller GmbH', note: '50% "off"' });
    });

    it('carries a message without a key or headers', async () => {
      const message = testMessage(env.topic('plain'), { key: null, headers: {} });
      await env.publisher.publish(message);
      const [received] = await env.waitForMessages(1);
      expect(received?.key).toBeNull();
      expect(received?.id).toBe(message.id);
    });

    it('confirms hundreds of concurrent publishes, each one stored', async () => {
      const messages = Array.from({ length: 500 }, (_, i) => testMessage(env.topic('bulk'), { key: `k${i % 7}`, seq: String(i) }));
      await Promise.all(messages.map((m) => env.publisher.publish(m)));
      const received = await env.waitForMessages(messages.length);
      expect(new Set(received.map((r) => r.id))).toEqual(new Set(messages.map((m) => m.id)));
    });

    it('accepts a second publish of the same id (a relay retrying after a lost mark)', async () => {
      const message = testMessage(env.topic('again'));
      await env.publisher.publish(message);
      await expect(env.publisher.publish(message)).resolves.toBeUndefined();
    });

    it('fails a publish the broker cannot route with a retryable PublishError, or confirms it where every topic is routable', async () => {
      const unroutable = env.unroutableTopic;
      if (unroutable === null) {
        await expect(env.publisher.publish(testMessage(env.topic('nobody-listens')))).resolves.toBeUndefined();
        return;
      }
      const error = await env.publisher.publish(testMessage(unroutable)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).permanent).toBe(false);
    });

    it('refuses to publish after close', async () => {
      await env.publisher.close();
      const error = await env.publisher.publish(testMessage(env.topic('closed'))).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OutboxerError);
      expect((error as OutboxerError).code).toBe('OUTBOXER_CLOSED');
    });
  });

  describe(`${harness.name} publisher with no broker`, () => {
    it('rejects with a PublishError that never shows the password', async () => {
      const secret = `canary-${Math.random().toString(36).slice(2)}`;
      const publisher = await harness.unreachable(secret);
      try {
        const error = await publisher.publish(testMessage('orders.unreachable')).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(PublishError);
        expect((error as PublishError).permanent).toBe(false);
        expect(String((error as Error).message)).not.toContain(secret);
        expect(JSON.stringify(error)).not.toContain(secret);
        expect(String((error as Error).stack)).not.toContain(secret);
      } finally {
        await publisher.close();
      }
    });
  });
}
