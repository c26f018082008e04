import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import type { NewOutboxMessage, OutboxMessageInput } from '../../src/core/message.js';
import { Outbox } from '../../src/core/outbox.js';
import type { EnqueueInstrumentation } from '../../src/core/ports/enqueue-instrumentation.js';
import type { PartitionReader, RelayLeases } from '../../src/core/ports.js';
import { createEnqueueTracing } from '../../src/ops/tracing/index.js';
import { inMemoryTracing, registerGlobals, traceparentOf } from '../support/tracing-harness.js';

/** A port these tests never reach: they enqueue, and no relay runs. */
const notRelaying = new Proxy(
  {},
  {
    get: (_target, name) => {
      throw new Error(`this test store does not relay (it was asked for ${String(name)})`);
    },
  },
);

/** The writer role, recording what it would store; repeated idempotency keys answer with the first id, as stores do. */
function recordingWriter() {
  const stored: NewOutboxMessage[] = [];
  const byKey = new Map<string, string>();
  let failure: Error | undefined;
  const store = {
    async insert(_tx: { name: string }, messages: readonly NewOutboxMessage[]) {
      if (failure !== undefined) throw failure;
      return messages.map((message) => {
        const first = message.idempotencyKey === null ? undefined : byKey.get(message.idempotencyKey);
        if (first !== undefined) return first;
        if (message.idempotencyKey !== null) byKey.set(message.idempotencyKey, message.id);
        stored.push(message);
        return message.id;
      });
    },
    purgePublished: async () => 0,
    purgeIdempotencyKeys: async () => 0,
    leases: notRelaying as RelayLeases,
    reader: notRelaying as PartitionReader,
  };
  return { store, stored, fail: (error: Error) => void (failure = error) };
}

const tx = { name: 'caller-tx' };
const order = (n: number, extra: Partial<OutboxMessageInput> = {}): OutboxMessageInput => ({
  topic: 'orders.created',
  type: 'order.created',
  payload: { n, card: 'PAYLOAD-SECRET' },
  ...extra,
});

describe('enqueue tracing (Outbox option instrumentation)', () => {
  let undo: () => void;
  beforeAll(() => {
    undo = registerGlobals();
  });
  afterAll(() => undo());

  it("opens one create span (PRODUCER) per message under the caller's span and stores its context in the message's traceparent", async () => {
    const sdk = inMemoryTracing();
    const writer = recordingWriter();
    const outbox = new Outbox(writer.store, { instrumentation: createEnqueueTracing({ system: 'rabbitmq', tracerProvider: sdk.provider }) });
    const request = sdk.provider.getTracer('app').startSpan('POST /orders');
    const ids = await context.with(trace.setSpan(context.active(), request), () =>
      outbox.enqueueMany(tx, [order(1), order(2, { headers: { tenant: 'acme' } })]),
    );
    request.end();

    const creates = sdk.named('create orders.created');
    const [parent] = sdk.named('POST /orders');
    expect(creates).toHaveLength(2);
    creates.forEach((span, i) => {
      expect(span).toMatchObject({ kind: 'PRODUCER', traceId: parent?.traceId, parentSpanId: parent?.spanId, status: { code: 0 } });
      expect(span.attributes).toEqual({
        'messaging.system': 'rabbitmq',
        'messaging.operation.name': 'create',
        'messaging.operation.type': 'create',
        'messaging.destination.name': 'orders.created',
        'messaging.rabbitmq.destination.routing_key': 'orders.created',
        'messaging.message.id': ids[i],
        'outboxer.message.type': 'order.created',
      });
      expect(writer.stored[i]?.headers.traceparent).toBe(traceparentOf(span));
    });
    expect(writer.stored[1]?.headers.tenant).toBe('acme');
    expect(JSON.stringify(sdk.spans())).not.toContain('PAYLOAD-SECRET');
  });

  it('keeps a trace context the producer set itself, and opens no span for that message', async () => {
    const sdk = inMemoryTracing();
    const writer = recordingWriter();
    const outbox = new Outbox(writer.store, { instrumentation: createEnqueueTracing({ system: 'nats', tracerProvider: sdk.provider }) });
    const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await outbox.enqueueMany(tx, [order(1, { headers: { traceparent: own, tracestate: 'vendor=1' } }), order(2)]);
    expect(writer.stored[0]?.headers).toEqual({ traceparent: own, tracestate: 'vendor=1' });
    expect(sdk.spans().map((span) => span.name)).toEqual(['create orders.created']);
    expect(writer.stored[1]?.headers.traceparent).toBe(traceparentOf(sdk.spans()[0]!));
  });

  it("marks every span of a batch failed when the insert fails, and rethrows the store's error unchanged", async () => {
    const sdk = inMemoryTracing();
    const writer = recordingWriter();
    const outbox = new Outbox(writer.store, { instrumentation: createEnqueueTracing({ system: 'rabbitmq', tracerProvider: sdk.provider }) });
    const failure = new Error('connection reset');
    writer.fail(failure);
    await expect(outbox.enqueueMany(tx, [order(1), order(2)])).rejects.toBe(failure);
    await expect(outbox.enqueue(tx, order(3, { topic: 'orders.*' }))).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_TOPIC' });
    expect(sdk.spans().map((span) => [span.status.code, span.attributes['error.type']])).toEqual([
      [2, 'Error'],
      [2, 'Error'],
      [2, 'OUTBOXER_INVALID_TOPIC'],
    ]);
  });

  it('names the message a repeated idempotency key answered with', async () => {
    const sdk = inMemoryTracing();
    const writer = recordingWriter();
    const outbox = new Outbox(writer.store, { instrumentation: createEnqueueTracing({ system: 'rabbitmq', tracerProvider: sdk.provider }) });
    const [first, second] = await outbox.enqueueMany(tx, [order(1, { idempotencyKey: 'k' }), order(2, { idempotencyKey: 'k' })]);
    expect(second).toBe(first);
    const [, repeated] = sdk.spans();
    expect(repeated?.attributes['outboxer.message.duplicate_of']).toBe(first);
    expect(repeated?.attributes['messaging.message.id']).not.toBe(first);
  });

  it('without an SDK adds no header, unless a valid context is active: then it passes that context on (W3C, no propagator registered)', async () => {
    const writer = recordingWriter();
    const outbox = new Outbox(writer.store, { instrumentation: createEnqueueTracing({ system: 'rabbitmq' }) });
    await outbox.enqueue(tx, order(1));
    expect(writer.stored[0]?.headers).toEqual({});
    const incoming = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true };
    await context.with(trace.setSpanContext(ROOT_CONTEXT, incoming), () => outbox.enqueue(tx, order(2)));
    expect(writer.stored[1]?.headers).toEqual({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
  });

  it('uses the propagator it is given: tracestate travels too', async () => {
    const sdk = inMemoryTracing();
    const writer = recordingWriter();
    const outbox = new Outbox(writer.store, {
      instrumentation: createEnqueueTracing({
        system: 'rabbitmq',
        tracerProvider: sdk.provider,
        propagator: new W3CTraceContextPropagator(),
        destinationName: (topic) => `outbox:${topic}`,
      }),
    });
    const upstream = new W3CTraceContextPropagator().extract(
      ROOT_CONTEXT,
      { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'congo=t61rcWkgMzE' },
      { get: (c, k) => c[k as 'traceparent'], keys: (c) => Object.keys(c) },
    );
    await context.with(upstream, () => outbox.enqueue(tx, order(1)));
    const [span] = sdk.spans();
    expect(span?.name).toBe('create outbox:orders.created');
    expect(writer.stored[0]?.headers).toEqual({ traceparent: traceparentOf(span!), tracestate: 'congo=t61rcWkgMzE' });
    expect(span?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });
});

describe('Outbox option instrumentation: resolved once, and a wrapper cannot fake a store', () => {
  it('refuses an unknown option and an instrumentation without enqueue()', () => {
    const { store } = recordingWriter();
    expect(() => new Outbox(store, { instrumentaton: {} } as never)).toThrow(ConfigurationError);
    expect(() => new Outbox(store, { instrumentaton: {} } as never)).toThrow(/instrumentaton: is not an option \(known: .*instrumentation/);
    expect(() => new Outbox(store, { instrumentation: {} as EnqueueInstrumentation })).toThrow(/instrumentation: must have an enqueue/);
  });

  it('fails the enqueue when the instrumentation resolves without storing, and stores once when it calls store twice', async () => {
    const writer = recordingWriter();
    const skipping = new Outbox(writer.store, { instrumentation: { enqueue: async () => undefined } });
    await expect(skipping.enqueue(tx, order(1))).rejects.toMatchObject({
      code: 'OUTBOXER_INVALID_OPTION',
      message: expect.stringContaining('without calling store'),
    });
    const twice = new Outbox(writer.store, { instrumentation: { enqueue: async (messages, store) => void (await store(messages), await store(messages)) } });
    await expect(twice.enqueue(tx, order(2))).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_OPTION' });
    expect(writer.stored).toHaveLength(1);
  });

  it('refuses tracing options it does not know, and a system that is not a name', () => {
    expect(() => createEnqueueTracing({ system: 'rabbitmq', tracer: {} } as never)).toThrow(/tracing option tracer: is not a known option/);
    expect(() => createEnqueueTracing({} as never)).toThrow(/tracing option system/);
    expect(() => createEnqueueTracing({ system: 'Rabbit MQ' })).toThrow(/lowercase/);
    expect(() => createEnqueueTracing({ system: 'nats', tracerProvider: {} as never })).toThrow(/TracerProvider/);
  });
});
