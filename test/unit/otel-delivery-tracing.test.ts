import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { DeliverySource } from '../../src/consumer/delivery-instrumentation.js';
import { runDelivery, type Delivery, type RunnerContext } from '../../src/consumer/delivery-runner.js';
import type { HandleOutcome, Inbox } from '../../src/consumer/inbox.js';
import { resolveNatsConsumerOptions } from '../../src/brokers/nats/consumer/options.js';
import { resolveRabbitMqConsumerOptions } from '../../src/brokers/rabbitmq/consumer/options.js';
import type { RawDelivery } from '../../src/consumer/received-message.js';
import { createDeliveryTracing } from '../../src/ops/tracing/index.js';
import { inMemoryTracing, registerGlobals, traceparentOf } from '../support/tracing-harness.js';

const CREATION = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
const ID = '0190f5b2-6c1e-7a3b-9d4e-1f2a3b4c5d6e';
const source: DeliverySource = { system: 'rabbitmq', destination: 'outbox:orders.created:billing', subscription: 'billing', routingKey: 'orders.created' };

function raw(headers: Record<string, string>): RawDelivery {
  return {
    id: ID.toUpperCase(),
    type: 'order.created',
    key: 'o-1',
    topic: 'orders.created',
    headers,
    body: Buffer.from('{"card":"PAYLOAD-SECRET"}'),
    contentType: 'application/json',
    deliveryCount: 1,
  };
}

describe('delivery tracing', () => {
  let undo: () => void;
  beforeAll(() => {
    undo = registerGlobals();
  });
  afterAll(() => undo());

  it('processes in a CONSUMER span parented to and linked with the creation context; spans the handler opens nest under it', async () => {
    const sdk = inMemoryTracing();
    const tracing = createDeliveryTracing({ tracerProvider: sdk.provider });
    const handler = sdk.provider.getTracer('app');
    await tracing.process({ raw: raw({ traceparent: traceparentOf(CREATION), 'correlation-id': 'c-9' }), source, consumer: 'billing' }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1)); // across an await, as a database round trip is
      handler.startSpan('charge card').end();
      return { status: 'processed', attempts: 1 };
    });
    const [process] = sdk.named('process outbox:orders.created:billing');
    const [charge] = sdk.named('charge card');
    expect(process).toMatchObject({ kind: 'CONSUMER', traceId: CREATION.traceId, parentSpanId: CREATION.spanId, links: [CREATION], status: { code: 0 } });
    expect(process?.attributes).toEqual({
      'messaging.system': 'rabbitmq',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'outbox:orders.created:billing',
      'messaging.rabbitmq.destination.routing_key': 'orders.created',
      'messaging.message.id': ID,
      'messaging.message.conversation_id': 'c-9',
      'outboxer.message.type': 'order.created',
      'outboxer.inbox.consumer': 'billing',
      'outboxer.inbox.outcome': 'processed',
      'outboxer.message.attempts': 1,
    });
    expect(charge).toMatchObject({ traceId: CREATION.traceId, parentSpanId: process?.spanId });
    expect(JSON.stringify(sdk.spans())).not.toContain('PAYLOAD-SECRET');
  });

  it.each<[HandleOutcome, number, string | undefined]>([
    [{ status: 'duplicate', state: 'processed' }, 0, undefined],
    [{ status: 'retry', attempts: 2, error: 'TypeError: card declined', retryInMs: 50 }, 2, 'TypeError'],
    [{ status: 'dead', attempts: 5, reason: 'OUTBOXER_UNKNOWN_TYPE: no handler for order.created' }, 2, 'OUTBOXER_UNKNOWN_TYPE'],
    [{ status: 'malformed', reason: 'no UUID message id' }, 2, 'OUTBOXER_MALFORMED_MESSAGE'],
  ])('records the outcome %j: status %i, error.type %s', async (outcome, code, errorType) => {
    const sdk = inMemoryTracing();
    await createDeliveryTracing({ tracerProvider: sdk.provider }).process(
      { raw: raw({}), source: { system: 'nats', destination: 'p.orders.created', subscription: 'billing-d' }, consumer: 'billing' },
      async () => outcome,
    );
    const [span] = sdk.spans();
    expect(span).toMatchObject({ name: 'process p.orders.created', parentSpanId: undefined, links: [], status: { code } });
    expect(span?.attributes).toMatchObject({
      'outboxer.inbox.outcome': outcome.status,
      'messaging.consumer.group.name': 'billing-d',
      'messaging.system': 'nats',
    });
    expect(span?.attributes['error.type']).toBe(errorType);
  });

  it('keeps an ambient span as a second link when the creation context is the parent, and rethrows what handle throws', async () => {
    const sdk = inMemoryTracing();
    const ambient = sdk.provider.getTracer('app').startSpan('amqp consume');
    const failure = new Error('database unreachable');
    const attempt = () =>
      createDeliveryTracing({ tracerProvider: sdk.provider }).process(
        { raw: raw({ traceparent: traceparentOf(CREATION) }), source, consumer: 'billing' },
        async () => {
          throw failure;
        },
      );
    await expect(context.with(trace.setSpan(ROOT_CONTEXT, ambient), attempt)).rejects.toBe(failure);
    ambient.end();
    const [process] = sdk.spans();
    expect(process?.links).toEqual([CREATION, { traceId: ambient.spanContext().traceId, spanId: ambient.spanContext().spanId }]);
    expect(process?.status.code).toBe(2);
    expect(process?.attributes['error.type']).toBe('Error');
  });
});

describe('the delivery runner with an instrumentation', () => {
  const runnerContext = (
    handleDelivery: () => Promise<HandleOutcome>,
    instrumentation: RunnerContext<unknown>['instrumentation'],
    stop = new AbortController(),
  ): RunnerContext<unknown> => ({
    inbox: { consumer: 'billing', handleDelivery } as unknown as Inbox<unknown>,
    handler: undefined,
    hooks: {},
    logger: silentLogger,
    instrumentation,
    errorBackoff: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 1000, jitter: 0 },
    keepAliveMs: undefined,
    stopSignal: stop.signal,
  });
  const delivery = (settled: string[]): Delivery => ({
    raw: raw({}),
    source,
    ack: async () => void settled.push('ack'),
    dead: async (reason) => void settled.push(`dead: ${reason}`),
    release: async () => void settled.push('release'),
  });

  it("runs each attempt inside the instrumentation and acts on the inbox's outcome", async () => {
    const settled: string[] = [];
    const seen: string[] = [];
    const outcomes: HandleOutcome[] = [
      { status: 'retry', attempts: 1, error: 'Error: flaky', retryInMs: 1 },
      { status: 'processed', attempts: 2 },
    ];
    await runDelivery(
      runnerContext(async () => outcomes.shift()!, {
        process: async (attempt, handle) => {
          seen.push(`${attempt.consumer} ${attempt.source.destination} ${(await handle()).status}`);
        },
      }),
      delivery(settled),
    );
    expect(seen).toEqual(['billing outbox:orders.created:billing retry', 'billing outbox:orders.created:billing processed']);
    expect(settled).toEqual(['ack']);
  });

  it('holds the delivery while an instrumentation resolves without handling it: never acked on a guess', async () => {
    const settled: string[] = [];
    const stop = new AbortController();
    let tries = 0;
    await runDelivery(
      runnerContext(
        async () => ({ status: 'processed', attempts: 1 }),
        {
          process: async () => {
            if (++tries === 3) stop.abort();
          },
        },
        stop,
      ),
      delivery(settled),
    );
    expect(tries).toBe(3);
    expect(settled).toEqual(['release']);
  });

  it('is an option of both consumers, refused when it is not an instrumentation', () => {
    const inbox = { handleDelivery: async () => undefined } as unknown as Inbox<unknown>;
    const instrumentation = createDeliveryTracing();
    expect(resolveRabbitMqConsumerOptions({ url: 'amqp://127.0.0.1', queue: 'q', inbox, instrumentation }).instrumentation).toBe(instrumentation);
    expect(resolveNatsConsumerOptions({ servers: 'nats://127.0.0.1:4222', stream: 's', durable: 'd', inbox, instrumentation }).instrumentation).toBe(
      instrumentation,
    );
    expect(() => resolveRabbitMqConsumerOptions({ url: 'amqp://127.0.0.1', queue: 'q', inbox, instrumentation: {} as never })).toThrow(
      /instrumentation: must have a process/,
    );
    expect(() =>
      resolveNatsConsumerOptions({ servers: 'nats://127.0.0.1:4222', stream: 's', durable: 'd', inbox, instrumentation: (() => undefined) as never }),
    ).toThrow(/instrumentation: must have a process/);
    expect(() => createDeliveryTracing({ system: 'nats' } as never)).toThrow(/tracing option system: is not a known option/);
  });
});
