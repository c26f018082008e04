import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { failureAction } from '../../src/core/publish-failure.js';
import { retryAfterMs } from '../../src/brokers/webhook/index.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { closedPort, Gate, newSecret, webhookPublishers, WebhookReceiver, type Answer } from '../support/webhook-harness.js';
import { waitFor } from '../support/wait-for.js';

const failureOf = (promise: Promise<unknown>): Promise<PublishError> =>
  promise.then(
    () => {
      throw new Error('expected the publish to fail');
    },
    (error: unknown) => error as PublishError,
  );

interface Expected {
  readonly code: string;
  readonly action: string;
  readonly retryAfterMs?: number;
}

/** Each answer a receiver may give, and what the publisher makes of it (the relay acts by `failureAction`). */
const ANSWERS: readonly [string, Answer, Expected][] = [
  ['500', { status: 500 }, { code: 'OUTBOXER_PUBLISH_FAILED', action: 'retry' }],
  ['502', { status: 502 }, { code: 'OUTBOXER_PUBLISH_FAILED', action: 'retry' }],
  ['503 without Retry-After', { status: 503 }, { code: 'OUTBOXER_PUBLISH_FAILED', action: 'retry' }],
  ['504', { status: 504 }, { code: 'OUTBOXER_PUBLISH_FAILED', action: 'retry' }],
  ['408', { status: 408 }, { code: 'OUTBOXER_PUBLISH_FAILED', action: 'retry' }],
  ['425', { status: 425 }, { code: 'OUTBOXER_PUBLISH_FAILED', action: 'retry' }],
  ['429 without Retry-After', { status: 429 }, { code: 'OUTBOXER_RATE_LIMITED', action: 'retry' }],
  ['429 Retry-After: 7', { status: 429, headers: { 'retry-after': '7' } }, { code: 'OUTBOXER_RATE_LIMITED', action: 'retry', retryAfterMs: 7000 }],
  ['503 Retry-After: 120', { status: 503, headers: { 'retry-after': '120' } }, { code: 'OUTBOXER_RATE_LIMITED', action: 'retry', retryAfterMs: 60_000 }],
  ['400', { status: 400 }, { code: 'OUTBOXER_REJECTED', action: 'dead' }],
  ['409', { status: 409 }, { code: 'OUTBOXER_REJECTED', action: 'dead' }],
  ['422', { status: 422 }, { code: 'OUTBOXER_REJECTED', action: 'dead' }],
  ['413', { status: 413 }, { code: 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', action: 'dead' }],
  ['404', { status: 404 }, { code: 'OUTBOXER_UNROUTABLE', action: 'pause-topic' }],
  ['410', { status: 410 }, { code: 'OUTBOXER_UNROUTABLE', action: 'pause-topic' }],
  ['401', { status: 401 }, { code: 'OUTBOXER_AUTH_FAILED', action: 'release' }],
  ['403', { status: 403 }, { code: 'OUTBOXER_AUTH_FAILED', action: 'release' }],
];

describe('webhook publisher: answers and failures', () => {
  const publishers = webhookPublishers();
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    await publishers.closeAll();
    await receiver.close();
  });

  it('confirms on any 2xx', async () => {
    const publisher = publishers.make({ url: receiver.url(), secret: newSecret() });
    for (const status of [200, 201, 202, 204, 299]) {
      receiver.respond = () => ({ status });
      await expect(publisher.publish(testMessage('orders.ok'))).resolves.toBeUndefined();
    }
    expect(receiver.requests).toHaveLength(5);
  });

  it.each(ANSWERS)('maps %s to its code; the message names the status, never the body', async (_, answer, expected) => {
    const publisher = publishers.make({ url: receiver.url(), secret: newSecret(), maxRetryAfterMs: 60_000 });
    receiver.respond = () => ({ ...answer, body: 'canary-body: stack trace with a customer email' });
    const message = testMessage('orders.answer');
    const error = await failureOf(publisher.publish(message));
    expect(error).toBeInstanceOf(PublishError);
    expect({ code: error.code, action: failureAction(error), retryAfterMs: error.retryAfterMs }).toEqual({ retryAfterMs: undefined, ...expected });
    expect(error.message).toContain(`HTTP ${answer.status}`);
    expect(error.message).toContain(message.id);
    expect(error.message).not.toContain('canary-body');
  });

  it('honours Retry-After as an HTTP date, and reads both forms as RFC 9110 writes them', async () => {
    const publisher = publishers.make({ url: receiver.url(), secret: newSecret() });
    receiver.respond = () => ({ status: 503, headers: { 'retry-after': new Date(Date.now() + 30_000).toUTCString() } });
    const error = await failureOf(publisher.publish(testMessage('orders.later')));
    expect(error.code).toBe('OUTBOXER_RATE_LIMITED');
    expect(error.retryAfterMs).toBeGreaterThan(27_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('0', now)).toBe(0);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('-5', now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it('does not follow a redirect: one request, a retryable error naming the Location to configure, nothing sent to the target', async () => {
    const target = await WebhookReceiver.start();
    try {
      const publisher = publishers.make({ url: receiver.url(), secret: newSecret() });
      for (const status of [301, 302, 307, 308]) {
        receiver.respond = () => ({ status, headers: { location: `${target.url('/moved')}?token=abc` } });
        const error = await failureOf(publisher.publish(testMessage('orders.moved')));
        expect({ code: error.code, action: failureAction(error) }).toEqual({ code: 'OUTBOXER_PUBLISH_FAILED', action: 'retry' });
        expect(error.message).toContain(`Location ${target.url('/moved')}?…`);
        expect(error.message).not.toContain('token=abc');
      }
      expect(receiver.requests).toHaveLength(4);
      expect(target.requests).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('times out an unanswered POST within publishTimeoutMs (retryable: the retry carries the same webhook-id)', async () => {
    const gate = new Gate();
    receiver.respond = gate.responder;
    const publisher = publishers.make({ url: receiver.url(), secret: newSecret(), publishTimeoutMs: 300 });
    const started = performance.now();
    const error = await failureOf(publisher.publish(testMessage('orders.slow')));
    expect(performance.now() - started).toBeLessThan(2000);
    expect({ code: error.code, action: failureAction(error) }).toEqual({ code: 'OUTBOXER_PUBLISH_TIMEOUT', action: 'retry' });
    expect(error.message).toMatch(/within 300 ms.*webhook-id/);
    gate.open();
  });

  it('keeps at most maxConcurrencyPerEndpoint requests in flight to one origin, while another origin is served meanwhile', async () => {
    const gate = new Gate();
    receiver.respond = gate.responder;
    const other = await WebhookReceiver.start();
    try {
      const publisher = publishers.make({
        url: receiver.url(),
        secret: newSecret(),
        maxConcurrencyPerEndpoint: 3,
        routes: [{ topic: 'other.#', url: other.url() }],
      });
      const publishes = Array.from({ length: 10 }, (_, i) => publisher.publish(testMessage('orders.bounded', { key: `k${i}` })));
      await waitFor(() => gate.held === 3, { what: '3 requests held' });
      await publisher.publish(testMessage('other.fast')); // the slow origin's bound does not hold it back
      expect(other.requests).toHaveLength(1);
      while (receiver.requests.length < 10) {
        const seen = receiver.requests.length;
        gate.releaseOne();
        await waitFor(() => receiver.requests.length > seen || receiver.requests.length === 10, { what: 'the next request in the freed slot' });
      }
      gate.open();
      await Promise.all(publishes);
      expect(receiver.maxInFlight).toBe(3);
      expect(receiver.requests).toHaveLength(10);
    } finally {
      await other.close();
    }
  });

  it('reports a closed port as OUTBOXER_BROKER_UNAVAILABLE (released uncounted), and its connection state follows', async () => {
    const port = await closedPort();
    const publisher = publishers.make({ url: receiver.url(), secret: newSecret(), routes: [{ topic: 'down.#', url: `http://127.0.0.1:${port}/outbox` }] });
    expect(publisher.connectionState?.()).toBe('connecting');
    const error = await failureOf(publisher.publish(testMessage('down.x')));
    expect({ code: error.code, action: failureAction(error) }).toEqual({ code: 'OUTBOXER_BROKER_UNAVAILABLE', action: 'release' });
    expect(error.message).toContain('ECONNREFUSED');
    expect(publisher.connectionState?.()).toBe('disconnected');
    await publisher.publish(testMessage('up.x'));
    expect(publisher.connectionState?.()).toBe('connected');
    await publisher.close();
    expect(publisher.connectionState?.()).toBe('disconnected');
  });

  it('reports a server that does not speak HTTP as OUTBOXER_WRONG_PROTOCOL', async () => {
    const sockets = new Set<Socket>();
    const server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const publisher = publishers.make({ url: `http://127.0.0.1:${port}/`, secret: newSecret() });
      const error = await failureOf(publisher.publish(testMessage('orders.ssh')));
      expect({ code: error.code, action: failureAction(error) }).toEqual({ code: 'OUTBOXER_WRONG_PROTOCOL', action: 'release' });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('lets close() wait for a POST in flight, then refuses new publishes', async () => {
    const gate = new Gate();
    receiver.respond = gate.responder;
    const publisher = publishers.make({ url: receiver.url(), secret: newSecret() });
    const publishing = publisher.publish(testMessage('orders.closing'));
    await waitFor(() => gate.held === 1, { what: 'the request held' });
    let closed = false;
    const closing = publisher.close().then(() => (closed = true));
    expect((await failureOf(publisher.publish(testMessage('orders.late')))).code).toBe('OUTBOXER_CLOSED');
    expect(closed).toBe(false);
    gate.open();
    await expect(publishing).resolves.toBeUndefined();
    await closing;
    expect(receiver.requests).toHaveLength(1);
  });
});
