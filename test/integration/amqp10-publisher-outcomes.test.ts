import type { AddressInfo, Server } from 'node:net';
import rhea, { type EventContext, type Receiver } from 'rhea';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { type FailureAction, failureAction } from '../../src/core/publish-failure.js';
import { createAmqp10Publisher } from '../../src/brokers/amqp10/index.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Outcomes RabbitMQ 3.10's plugin never sends (it accepts, or ends the session), from a scripted AMQP 1.0 peer
 * built on rhea's own server side: the target address says what the peer does with the attach or the transfer.
 * Azure Service Bus, Artemis and Qpid send these; the peer speaks the same frames.
 */
describe('amqp10 publisher against an AMQP 1.0 peer that rejects, releases, refuses and withholds credit', () => {
  let server: Server;
  let port: number;
  const received: string[] = [];
  const creditLinks = new Map<string, Receiver>();

  beforeAll(async () => {
    const peer = rhea.create_container({ id: 'outboxer-test-peer', autoaccept: false, credit_window: 0 });
    peer.on('error', () => undefined);
    peer.sasl_server_mechanisms.enable_plain((username: string, password: string) => username === 'test' && password === 'secret');
    peer.on('receiver_open', (context: EventContext) => {
      const receiver = context.receiver as Receiver;
      const address = String((receiver.target as { address?: unknown }).address);
      if (address === 'refuse-attach') {
        receiver.close({ condition: 'amqp:not-found', description: 'no node named refuse-attach' });
        return;
      }
      if (address.startsWith('credit')) creditLinks.set(address, receiver);
      else receiver.add_credit(100);
    });
    peer.on('message', (context: EventContext) => {
      const delivery = context.delivery;
      const address = String((context.receiver?.target as { address?: unknown } | undefined)?.address);
      received.push(`${address}:${String(context.message?.message_id)}`);
      if (delivery === undefined) return;
      if (address.startsWith('credit') || address === 'accept') delivery.accept();
      else if (address === 'release') delivery.release();
      else if (address === 'modify') delivery.modified({ delivery_failed: true, undeliverable_here: true });
      else delivery.reject({ condition: address.replace(/^reject:/, ''), description: 'refused by the test peer' });
      if (!address.startsWith('credit')) context.receiver?.add_credit(1);
    });
    server = peer.listen({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function publisher(publishTimeoutMs = 5000) {
    return createAmqp10Publisher({ url: `amqp://test:secret@127.0.0.1:${port}`, address: '{topic}', publishTimeoutMs, idleTimeoutMs: 0 });
  }

  const outcomes: [string, string, FailureAction, boolean][] = [
    ['reject:amqp:not-found', 'OUTBOXER_UNROUTABLE', 'pause-topic', false],
    ['reject:amqp:unauthorized-access', 'OUTBOXER_AUTH_FAILED', 'release', false],
    ['reject:amqp:decode-error', 'OUTBOXER_REJECTED', 'dead', true],
    ['reject:amqp:link:message-size-exceeded', 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', 'dead', true],
    ['reject:amqp:internal-error', 'OUTBOXER_PUBLISH_FAILED', 'retry', false],
    ['release', 'OUTBOXER_PUBLISH_FAILED', 'retry', false],
    ['modify', 'OUTBOXER_PUBLISH_FAILED', 'retry', false],
    ['refuse-attach', 'OUTBOXER_UNROUTABLE', 'pause-topic', false],
  ];
  it.each(outcomes)('maps %s to %s (%s)', async (address, code, action, permanent) => {
    const amqp = publisher();
    try {
      const message = testMessage(address);
      const error = await amqp.publish(message).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).code).toBe(code);
      expect((error as PublishError).permanent).toBe(permanent);
      expect(failureAction(error)).toBe(action);
      expect((error as Error).message).toContain(message.id);
      expect((error as Error).message).not.toContain('secret');
      await expect(amqp.publish(testMessage('accept'))).resolves.toBeUndefined();
    } finally {
      await amqp.close();
    }
  });

  it('sends only as far as the link credit goes, and the rest waits for more', async () => {
    const amqp = publisher(1500);
    try {
      const first = [testMessage('credit-a'), testMessage('credit-a')];
      const third = testMessage('credit-a');
      const pending = [...first, third].map((m) =>
        amqp.publish(m).then(
          () => 'accepted',
          (e: unknown) => e,
        ),
      );
      const link = await waitFor(() => creditLinks.get('credit-a'), { what: 'the peer to see the attach' });
      link.add_credit(2);
      await expect(Promise.all(pending.slice(0, 2))).resolves.toEqual(['accepted', 'accepted']);
      const late = await pending[2];
      expect(late).toBeInstanceOf(PublishError);
      expect((late as PublishError).code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
      expect((late as Error).message).toContain('waiting for link credit');
      expect(received.filter((entry) => entry.startsWith('credit-a:'))).toEqual(first.map((m) => `credit-a:${m.id}`));
    } finally {
      await amqp.close();
    }
  });
});
