import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher } from '../../src/core/ports.js';
import { tracePublisher } from '../../src/ops/tracing/index.js';
import { inMemoryTracing, registerGlobals, traceparentOf } from '../support/tracing-harness.js';

const CREATION = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };

function message(headers: Record<string, string> = {}): OutboxMessage {
  return {
    id: '0190f5b2-6c1e-7a3b-9d4e-1f2a3b4c5d6e',
    seq: '1',
    topic: 'orders.created',
    type: 'order.created',
    key: 'o-1',
    body: '{"card":"PAYLOAD-SECRET"}',
    contentType: 'application/json',
    headers,
    createdAt: new Date(),
    attempts: 2,
    lastError: null,
  };
}

/** A publisher whose confirmations the test gives: `confirm()` resolves the oldest publish, `refuse()` rejects it. */
function heldPublisher() {
  const sent: { message: OutboxMessage; settle: (error?: Error) => void }[] = [];
  const publisher: Publisher = {
    name: 'rabbitmq',
    capabilities: { maxMessageBytes: 1000 },
    publish: (published) =>
      new Promise<void>((resolve, reject) => sent.push({ message: published, settle: (error) => (error === undefined ? resolve() : reject(error)) })),
    close: async () => undefined,
  };
  return { publisher, sent };
}

describe('tracePublisher', () => {
  let undo: () => void;
  beforeAll(() => {
    undo = registerGlobals();
  });
  afterAll(() => undo());

  it('continues the creation context: a CLIENT span, child of and linked to it, ended by the confirmation; the message goes out unchanged', async () => {
    const sdk = inMemoryTracing();
    const { publisher, sent } = heldPublisher();
    const traced = tracePublisher(publisher, { tracerProvider: sdk.provider });
    const stored = message({ traceparent: traceparentOf(CREATION), 'correlation-id': 'c-9' });
    const publishing = traced.publish(stored);
    await Promise.resolve();
    expect(sent[0]?.message).toBe(stored);
    expect(sdk.spans()).toEqual([]); // still waiting for the broker
    sent[0]?.settle();
    await publishing;
    const [span] = sdk.spans();
    expect(span).toMatchObject({
      name: 'publish orders.created',
      kind: 'CLIENT',
      traceId: CREATION.traceId,
      parentSpanId: CREATION.spanId,
      links: [CREATION],
      status: { code: 0 },
    });
    expect(span?.attributes).toEqual({
      'messaging.system': 'rabbitmq',
      'messaging.operation.name': 'publish',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'orders.created',
      'messaging.rabbitmq.destination.routing_key': 'orders.created',
      'messaging.message.id': stored.id,
      'messaging.message.conversation_id': 'c-9',
      'outboxer.message.type': 'order.created',
      'outboxer.message.attempts': 2,
    });
    expect(JSON.stringify(sdk.spans())).not.toContain('PAYLOAD-SECRET');
  });

  it('starts a trace for a message stored without a valid one (plain SQL producer): a PRODUCER span whose context is published, the row untouched', async () => {
    const sdk = inMemoryTracing();
    const { publisher, sent } = heldPublisher();
    const stored = message({ tenant: 'acme', traceparent: 'written-by-sql' });
    const publishing = tracePublisher(publisher, { tracerProvider: sdk.provider, system: 'nats', destinationName: (topic) => `outbox.${topic}` }).publish(
      stored,
    );
    await Promise.resolve();
    sent[0]?.settle();
    await publishing;
    const [span] = sdk.spans();
    expect(span).toMatchObject({ name: 'publish outbox.orders.created', kind: 'PRODUCER', parentSpanId: undefined, links: [] });
    expect(span?.attributes['messaging.system']).toBe('nats');
    expect(span?.attributes['messaging.rabbitmq.destination.routing_key']).toBeUndefined();
    expect(sent[0]?.message.headers).toEqual({ tenant: 'acme', traceparent: traceparentOf(span!) });
    expect(stored.headers).toEqual({ tenant: 'acme', traceparent: 'written-by-sql' });
  });

  it("records a refused publish (error.type is its code) and rejects with the publisher's own error", async () => {
    const sdk = inMemoryTracing();
    const { publisher, sent } = heldPublisher();
    const publishing = tracePublisher(publisher, { tracerProvider: sdk.provider }).publish(message({ traceparent: traceparentOf(CREATION) }));
    await Promise.resolve();
    const refusal = new PublishError('OUTBOXER_PUBLISH_TIMEOUT', 'message 0190f5b2 was not confirmed within 100 ms');
    sent[0]?.settle(refusal);
    await expect(publishing).rejects.toBe(refusal);
    const [span] = sdk.spans();
    expect(span?.attributes['error.type']).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    expect(span?.status).toEqual({ code: 2, message: 'OUTBOXER_PUBLISH_TIMEOUT: message 0190f5b2 was not confirmed within 100 ms' });
  });

  it('is the wrapped publisher otherwise: name, live capabilities, close, and verify/connectionState only when it has them', async () => {
    const events: string[] = [];
    let capabilities = { maxMessageBytes: 1 };
    const full: Publisher = {
      name: 'nats',
      get capabilities() {
        return capabilities;
      },
      publish: async () => undefined,
      verify: async () => void events.push('verify'),
      connectionState: () => 'connecting',
      close: async () => void events.push('close'),
    };
    const traced = tracePublisher(full);
    capabilities = { maxMessageBytes: 2 };
    expect(traced.name).toBe('nats');
    expect(traced.capabilities).toEqual({ maxMessageBytes: 2 });
    expect(traced.connectionState?.()).toBe('connecting');
    await traced.verify?.();
    await traced.close();
    expect(events).toEqual(['verify', 'close']);
    const bare = tracePublisher(heldPublisher().publisher);
    expect('verify' in bare || 'connectionState' in bare).toBe(false);
    expect(() => tracePublisher(full, { sytem: 'nats' } as never)).toThrow(/tracing option sytem: is not a known option/);
  });

  it('without an SDK publishes what it was given and adds nothing', async () => {
    const { publisher, sent } = heldPublisher();
    const traced = tracePublisher(publisher);
    const plain = message();
    const carrying = message({ traceparent: traceparentOf(CREATION) });
    const both = Promise.all([traced.publish(plain), traced.publish(carrying)]);
    await Promise.resolve();
    sent.forEach((entry) => entry.settle());
    await both;
    expect(sent.map((entry) => entry.message)).toEqual([plain, carrying]);
    expect(sent[0]?.message).toBe(plain);
  });
});
