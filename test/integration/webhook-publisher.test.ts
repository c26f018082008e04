import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PublishError } from '../../src/core/errors.js';
import { failureAction } from '../../src/core/publish-failure.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import {
  closedPort,
  newSecret,
  receivedMessage,
  webhookHarness,
  webhookPublishers,
  WebhookReceiver,
  type RecordedRequest,
} from '../support/webhook-harness.js';

describePublisherConformance(webhookHarness);

const keyOf = (secret: string): Buffer => Buffer.from(secret.slice('whsec_'.length), 'base64');
const headersOf = (request: RecordedRequest): Record<string, string> => request.headers as Record<string, string>;
const failureOf = (promise: Promise<unknown>): Promise<PublishError> =>
  promise.then(
    () => {
      throw new Error('expected the publish to fail');
    },
    (error: unknown) => error as PublishError,
  );

describe('webhook publisher: the request', () => {
  const publishers = webhookPublishers();
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    await publishers.closeAll();
    await receiver.close();
    vi.restoreAllMocks();
  });

  it('is a POST signed as Standard Webhooks specify, which the reference library verifies (and a wrong secret or a changed body fails)', async () => {
    const secret = newSecret();
    const message = testMessage('orders.signed');
    await publishers.make({ url: receiver.url('/hooks/orders?tenant=acme'), secret }).publish(message);
    const [request] = await receiver.waitForRequests(1);
    if (request === undefined) throw new Error('no request');
    const headers = headersOf(request);
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks/orders?tenant=acme');
    expect(new Webhook(secret).verify(request.body, headers)).toEqual(JSON.parse(message.body as string));
    expect(headers['webhook-id']).toBe(message.id);
    expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(() => new Webhook(newSecret()).verify(request.body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(Buffer.concat([request.body, Buffer.from(' ')]), headers)).toThrow(WebhookVerificationError);
  });

  it('signs with every secret during a rotation: one v1 signature each, and either secret alone verifies', async () => {
    const [older, newer] = [newSecret(), newSecret()];
    await publishers.make({ url: receiver.url(), secret: [older, newer] }).publish(testMessage('orders.rotated'));
    const [request] = await receiver.waitForRequests(1);
    if (request === undefined) throw new Error('no request');
    const headers = headersOf(request);
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(headers['webhook-signature']?.split(' ').every((signature) => signature.startsWith('v1,'))).toBe(true);
    expect(() => new Webhook(older).verify(request.body, headers)).not.toThrow();
    expect(() => new Webhook(newer).verify(request.body, headers)).not.toThrow();
  });

  it('keeps webhook-id across attempts and stamps each attempt with its own time (a receiver dedups by id; its replay window sees a fresh timestamp)', async () => {
    const secret = newSecret();
    const publisher = publishers.make({ url: receiver.url(), secret });
    const message = testMessage('orders.again');
    await publisher.publish(message);
    const later = Date.now() + 3_600_000;
    vi.spyOn(Date, 'now').mockReturnValue(later);
    await publisher.publish(message);
    vi.restoreAllMocks();
    const [first, second] = (await receiver.waitForRequests(2)).map(headersOf);
    expect(second?.['webhook-id']).toBe(first?.['webhook-id']);
    expect(Number(second?.['webhook-timestamp'])).toBe(Math.floor(later / 1000));
    expect(Number(second?.['webhook-timestamp']) - Number(first?.['webhook-timestamp'])).toBeGreaterThanOrEqual(3599);
    expect(second?.['webhook-signature']).not.toBe(first?.['webhook-signature']);
  });

  it('sends the stored bytes exactly and signs those bytes, binary ones included (which the reference library, decoding the body as text, cannot verify)', async () => {
    const secret = newSecret();
    const message = testMessage('orders.binary', { body: Uint8Array.from([0, 0xff, 0x80, 0x0a]), contentType: 'application/x-protobuf' });
    await publishers.make({ url: receiver.url(), secret }).publish(message);
    const [request] = await receiver.waitForRequests(1);
    if (request === undefined) throw new Error('no request');
    const headers = headersOf(request);
    expect([...request.body]).toEqual([0, 0xff, 0x80, 0x0a]);
    expect(headers['content-type']).toBe('application/x-protobuf');
    expect(headers['content-length']).toBe('4');
    const expected = createHmac('sha256', keyOf(secret)).update(`${message.id}.${headers['webhook-timestamp']}.`).update(request.body).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
    expect(() => new Webhook(secret).verify(request.body, headers, { jsonParse: false })).toThrow(WebhookVerificationError);
  });

  it('carries topic, type, key and the message headers as request headers, UTF-8 values percent-encoded', async () => {
    const message = testMessage('orders.headers', {
      key: 'Kunde Müller 7',
      type: 'order.created',
      headers: { tenant: 'Müller GmbH', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    await publishers.make({ url: receiver.url(), secret: newSecret() }).publish(message);
    const [request] = await receiver.waitForRequests(1);
    if (request === undefined) throw new Error('no request');
    const headers = headersOf(request);
    expect(headers).toMatchObject({
      'outbox-id': message.id,
      'outbox-topic': 'orders.headers',
      'outbox-type': 'order.created',
      'outbox-key': 'Kunde%20M%C3%BCller%207',
      tenant: 'M%C3%BCller%20GmbH',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'user-agent': 'outboxer',
    });
    expect(receivedMessage(request)).toMatchObject({ key: 'Kunde Müller 7', headers: { tenant: 'Müller GmbH' } });
  });

  it('refuses a message header that would set a webhook-*, outbox-*, content-type or framing header, permanently and without a request', async () => {
    const publisher = publishers.make({ url: receiver.url(), secret: newSecret() });
    for (const name of ['webhook-signature', 'Webhook-Id', 'content-type', 'Content-Length', 'transfer-encoding', 'host', 'outbox-topic']) {
      const error = await failureOf(publisher.publish(testMessage('orders.forged', { headers: { [name]: 'x' } })));
      expect({ name, code: error.code, permanent: error.permanent, action: failureAction(error) }).toEqual({
        name,
        code: 'OUTBOXER_INVALID_HEADER',
        permanent: true,
        action: 'dead',
      });
      expect(error.message).toContain(name);
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it('sends the static headers option, which wins over a message header of the same name; credentials in the URL go as HTTP Basic', async () => {
    const publisher = publishers.make({
      url: receiver.url().replace('http://', 'http://relay:s3cr%40t@'),
      secret: newSecret(),
      headers: { 'X-Api-Key': 'key-1', 'User-Agent': 'orders-service' },
    });
    await publisher.publish(testMessage('orders.static', { headers: { 'x-api-key': 'from-the-message', tenant: 'acme' } }));
    const [request] = await receiver.waitForRequests(1);
    expect(request?.headers).toMatchObject({
      'x-api-key': 'key-1',
      'user-agent': 'orders-service',
      tenant: 'acme',
      authorization: `Basic ${Buffer.from('relay:s3cr@t').toString('base64')}`,
    });
  });

  it('routes by topic, first match wins (* one part, # zero or more), then the default url', async () => {
    const [exact, star, hash] = await Promise.all([WebhookReceiver.start(), WebhookReceiver.start(), WebhookReceiver.start()]);
    try {
      const publisher = publishers.make({
        url: receiver.url(),
        secret: newSecret(),
        routes: [
          { topic: 'orders.special', url: exact.url() },
          { topic: 'orders.*', url: star.url() },
          { topic: 'orders.#', url: hash.url() },
        ],
      });
      for (const topic of ['orders.special', 'orders.created', 'orders.eu.created', 'orders', 'payments.settled']) await publisher.publish(testMessage(topic));
      const topics = (r: WebhookReceiver) => r.requests.map((request) => request.headers['outbox-topic']);
      expect({ exact: topics(exact), star: topics(star), hash: topics(hash), fallback: topics(receiver) }).toEqual({
        exact: ['orders.special'],
        star: ['orders.created'],
        hash: ['orders.eu.created', 'orders'],
        fallback: ['payments.settled'],
      });
    } finally {
      await Promise.all([exact.close(), star.close(), hash.close()]);
    }
  });

  it('pauses a topic that no route matches when there is no default url (uncounted), naming the topic and the fix', async () => {
    const publisher = publishers.make({ secret: newSecret(), routes: [{ topic: 'orders.#', url: receiver.url() }] });
    const error = await failureOf(publisher.publish(testMessage('payments.settled')));
    expect({ code: error.code, permanent: error.permanent, action: failureAction(error) }).toEqual({
      code: 'OUTBOXER_UNROUTABLE',
      permanent: false,
      action: 'pause-topic',
    });
    expect(error.message).toMatch(/payments\.settled.*add a route/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses a body over maxMessageBytes without a request, and says so in capabilities', async () => {
    const publisher = publishers.make({ url: receiver.url(), secret: newSecret(), maxMessageBytes: 10 });
    expect(publisher.capabilities.maxMessageBytes).toBe(10);
    const error = await failureOf(publisher.publish(testMessage('orders.big', { body: JSON.stringify({ text: 'x'.repeat(20) }) })));
    expect({ code: error.code, permanent: error.permanent }).toEqual({ code: 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', permanent: true });
    expect(receiver.requests).toHaveLength(0);
  });

  it('verify() sends nothing by default, and with verifyProbe only that method, never a POST', async () => {
    const quiet = publishers.make({ url: receiver.url(), secret: newSecret() });
    expect(quiet.connectionState?.()).toBe('connecting');
    await quiet.verify?.();
    expect(quiet.connectionState?.()).toBe('connected'); // else an idle relay would report broker trouble
    expect(receiver.requests).toHaveLength(0);
    await publishers.make({ url: receiver.url(), secret: newSecret(), verifyProbe: 'HEAD' }).verify?.();
    expect(receiver.requests.map((request) => request.method)).toEqual(['HEAD']);
    receiver.respond = () => ({ status: 401 });
    const refused = await failureOf(publishers.make({ url: receiver.url(), secret: newSecret(), verifyProbe: 'OPTIONS' }).verify?.() ?? Promise.resolve());
    expect(refused.code).toBe('OUTBOXER_AUTH_FAILED');
    expect(receiver.requests.map((request) => request.method)).toEqual(['HEAD', 'OPTIONS']);
    const unreachable = publishers.make({ url: `http://127.0.0.1:${await closedPort()}/`, secret: newSecret(), verifyProbe: 'HEAD' });
    expect((await failureOf(unreachable.verify?.() ?? Promise.resolve())).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
    expect(unreachable.connectionState?.()).toBe('disconnected');
  });
});
