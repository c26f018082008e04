import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, MessageValidationError } from '../../src/core/errors.js';
import { MessageRegistry } from '../../src/consumer/message-registry.js';
import { payloadOf, type RawDelivery } from '../../src/consumer/received-message.js';
import { cloudEventAttributes, type CloudEventsOptions } from '../../src/brokers/cloudevents.js';
import { resolveNatsPublisherOptions } from '../../src/brokers/nats/options.js';
import { resolveRabbitMqPublisherOptions } from '../../src/brokers/rabbitmq/options.js';
import { decodeHeaderValue, encodeHeaderValue } from '../../src/brokers/header-value.js';
import type { OutboxMessage } from '../../src/core/message.js';

describe('NATS header values: percent-encoding as the CloudEvents NATS binding specifies', () => {
  it('encodes the binding example exactly, in upper-case hex', () => {
    expect(encodeHeaderValue('Euro € 😀')).toBe('Euro%20%E2%82%AC%20%F0%9F%98%80');
  });

  it('encodes space, double quote and percent, and leaves other printable ASCII as it is', () => {
    expect(encodeHeaderValue('50% "off"')).toBe('50%25%20%22off%22');
    const plain = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01:order.created/urn:x;a=b';
    expect(encodeHeaderValue(plain)).toBe(plain);
  });

  it('gives only printable ASCII without spaces, and decodes back to the original', () => {
    for (const value of ['Kunde Müller', 'ключ-7', '注文', '  padded  ', 'tab\there', '%41 is not A']) {
      const encoded = encodeHeaderValue(value);
      expect(encoded).toMatch(/^[!-~]*$/);
      expect(decodeHeaderValue(encoded)).toBe(value);
    }
  });

  it('decodes lower-case hex and quoted values, and keeps values that are not an encoding as they came', () => {
    expect(decodeHeaderValue('caf%c3%a9')).toBe('café');
    expect(decodeHeaderValue('"a \\"quoted\\" value"')).toBe('a "quoted" value');
    expect(decodeHeaderValue('50%')).toBe('50%');
    expect(decodeHeaderValue('%C0%A0')).toBe('%C0%A0'); // an overlong encoding of a space: not UTF-8
  });
});

describe('CloudEvents option and attributes', () => {
  const message: OutboxMessage = {
    id: '018f3c1e-7b2a-7cde-8f01-23456789abcd',
    seq: '1',
    topic: 'orders.created',
    type: 'order.created',
    key: 'order-7',
    body: '{}',
    contentType: 'application/json',
    headers: {},
    createdAt: new Date('2026-01-02T03:04:05.678Z'),
    attempts: 1,
    lastError: null,
  };

  it('maps id, type, source, specversion, time and the key as subject', () => {
    expect(cloudEventAttributes(message, { source: '/orders-service' })).toEqual({
      specversion: '1.0',
      id: message.id,
      source: '/orders-service',
      type: 'order.created',
      time: '2026-01-02T03:04:05.678Z',
      subject: 'order-7',
    });
    expect(cloudEventAttributes({ ...message, key: null }, { source: 'urn:acme:orders' })).not.toHaveProperty('subject');
  });

  const nats = (cloudEvents: unknown) =>
    resolveNatsPublisherOptions({ servers: 'nats://127.0.0.1:4222', cloudEvents: cloudEvents as CloudEventsOptions }).cloudEvents;
  const rabbitmq = (cloudEvents: unknown) =>
    resolveRabbitMqPublisherOptions({ url: 'amqp://127.0.0.1', cloudEvents: cloudEvents as CloudEventsOptions }).cloudEvents;

  it('is off unless given, and resolves to a frozen { source }', () => {
    expect(nats(undefined)).toBeUndefined();
    expect(rabbitmq(undefined)).toBeUndefined();
    const resolved = nats({ source: '/orders' });
    expect(resolved).toEqual({ source: '/orders' });
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(rabbitmq({ source: 'urn:acme:orders' })).toEqual({ source: 'urn:acme:orders' });
  });

  it.each([
    [{}, 'cloudEvents.source'],
    [{ source: '' }, 'cloudEvents.source'],
    [{ source: 'has space' }, 'cloudEvents.source'],
    [{ source: `/${'x'.repeat(1024)}` }, 'cloudEvents.source'],
    [{ source: 7 }, 'cloudEvents.source'],
    [{ source: '/ok', extra: 1 }, 'cloudEvents'],
    ['source', 'cloudEvents'],
    [null, 'cloudEvents'],
  ])('refuses %j, naming %s and the fix', (bad, option) => {
    const problem =
      option === 'cloudEvents'
        ? 'must be { source: "<URI-reference>" }, e.g. { source: "/orders-service" }'
        : 'must be a non-empty URI-reference (printable ASCII, no spaces, at most 1024 bytes), e.g. "/orders-service"';
    for (const [publisher, resolve] of [
      ['nats', nats],
      ['rabbitmq', rabbitmq],
    ] as const) {
      let refusal: unknown;
      try {
        resolve(bad);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(ConfigurationError);
      expect(refusal).toMatchObject({ code: 'OUTBOXER_INVALID_OPTION', message: `${publisher} publisher option ${option}: ${problem}`, options: [option] });
    }
  });
});

describe('consumers: what a handler gets for each content type', () => {
  const raw = (body: Uint8Array, contentType: string | undefined): RawDelivery => ({
    id: '018f3c1e-7b2a-7cde-8f01-23456789abcd',
    type: 'x',
    key: undefined,
    topic: 't',
    headers: {},
    body,
    contentType,
    deliveryCount: 1,
  });

  it('parses JSON content types (and a delivery without one) and hands any other as the bytes', () => {
    expect(payloadOf(raw(Buffer.from('{"a":1}'), 'application/vnd.acme+json; charset=utf-8'), 'm').payload).toEqual({ a: 1 });
    expect(payloadOf(raw(Buffer.from('[1]'), undefined), 'm')).toEqual({ payload: [1], contentType: 'application/json' });
    const bytes = Uint8Array.from([0, 255, 1]);
    expect(payloadOf(raw(bytes, 'application/x-protobuf'), 'm')).toEqual({ payload: bytes, contentType: 'application/x-protobuf' });
  });

  it('refuses a JSON body that is not UTF-8', () => {
    expect(() => payloadOf(raw(Uint8Array.from([0x22, 0xff, 0x22]), 'application/json'), 'message m')).toThrow(MessageValidationError);
  });

  it('lets a registry schema check a binary body at enqueue and stores the bytes as given', () => {
    const registry = new MessageRegistry().register(
      'order.proto',
      z.instanceof(Uint8Array).refine((b) => b.length > 0),
    );
    const bytes = Uint8Array.from([8, 1]);
    expect(registry.validateOutgoing('order.proto', bytes)).toBe(bytes);
    expect(() => registry.validateOutgoing('order.proto', new Uint8Array(0))).toThrow(MessageValidationError);
  });
});
