import { propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { describe, expect, it } from 'vitest';
import type { Publisher } from '../../src/core/ports.js';
import { createOtelInstrumentation, creationContextOf, parseTraceparent, traceHeaders } from '../../src/ops/tracing/index.js';
import { inMemoryTracing } from '../support/tracing-harness.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('trace context in message headers', () => {
  it.each([
    [`00-${TRACE}-${SPAN}-01`, { traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true }],
    [`00-${TRACE}-${SPAN}-00`, { traceId: TRACE, spanId: SPAN, traceFlags: 0, isRemote: true }],
    [`01-${TRACE}-${SPAN}-03-future`, { traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true }],
  ])('reads %s', (traceparent, expected) => {
    expect(parseTraceparent(traceparent)).toEqual(expected);
  });

  it.each([
    `ff-${TRACE}-${SPAN}-01`,
    `00-${'0'.repeat(32)}-${SPAN}-01`,
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00-${TRACE}-${SPAN}-01-extra`,
    `00-${TRACE.toUpperCase()}-${SPAN}-01`,
    'garbage',
    undefined,
  ])('refuses %s', (traceparent) => {
    expect(parseTraceparent(traceparent)).toBeUndefined();
  });

  it('with no propagator registered (the API default propagates nothing) writes and reads W3C itself, tracestate included', () => {
    expect(propagation.fields()).toEqual([]);
    const carrying = creationContextOf({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'congo=t61rcWkgMzE' }, propagation);
    expect(traceHeaders(carrying!, propagation)).toEqual({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'congo=t61rcWkgMzE' });
    expect(creationContextOf({ tenant: 'acme' }, propagation)).toBeUndefined();
    expect(traceHeaders(ROOT_CONTEXT, propagation)).toEqual({});
  });

  it('leaves writing to a propagator that writes traceparent, and reads what it extracts', () => {
    const w3c = new W3CTraceContextPropagator();
    const context = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.NONE });
    expect(traceHeaders(context, w3c)).toEqual({ traceparent: `00-${TRACE}-${SPAN}-00` });
    expect(trace.getSpanContext(creationContextOf({ traceparent: `00-${TRACE}-${SPAN}-00` }, w3c)!)).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
      isRemote: true,
    });
  });
});

describe('createOtelInstrumentation', () => {
  it('makes the three instrumentations with one configuration, and refuses a bad one at once', async () => {
    const sdk = inMemoryTracing();
    const otel = createOtelInstrumentation({ system: 'nats', tracerProvider: sdk.provider, destinationName: (topic) => `orders.${topic}` });
    expect(Object.isFrozen(otel)).toBe(true);
    const publisher: Publisher = { name: 'custom', capabilities: {}, publish: async () => undefined, close: async () => undefined };
    await otel.publisher(publisher).publish({
      id: '0190f5b2-6c1e-7a3b-9d4e-1f2a3b4c5d6e',
      seq: '1',
      topic: 'created',
      type: 't',
      key: null,
      body: '{}',
      contentType: 'application/json',
      headers: {},
      createdAt: new Date(),
      attempts: 1,
      lastError: null,
    });
    expect(sdk.spans().map((span) => [span.name, span.attributes['messaging.system']])).toEqual([['publish orders.created', 'nats']]);
    expect(typeof otel.enqueue.enqueue).toBe('function');
    expect(typeof otel.delivery.process).toBe('function');
    expect(() => createOtelInstrumentation({ system: 'nats', propagator: {} as never })).toThrow(/tracing option propagator: must be a TextMapPropagator/);
  });
});
