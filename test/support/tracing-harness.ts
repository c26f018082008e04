import { context, propagation, trace, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** A finished span as plain JSON: what a child process prints and a test compares. */
export interface SpanRecord {
  readonly name: string;
  /** SpanKind as its name: PRODUCER, CONSUMER, CLIENT, INTERNAL, SERVER. */
  readonly kind: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly links: readonly { traceId: string; spanId: string }[];
  readonly status: { code: number; message?: string };
}

const KINDS = ['INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];

export function spanRecord(span: ReadableSpan): SpanRecord {
  const own: SpanContext = span.spanContext();
  return {
    name: span.name,
    kind: KINDS[span.kind] ?? String(span.kind),
    traceId: own.traceId,
    spanId: own.spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    attributes: { ...span.attributes },
    links: span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId })),
    status: { ...span.status },
  };
}

/** An SDK of its own: a tracer provider whose finished spans stay in memory. */
export function inMemoryTracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    provider,
    exporter,
    spans: (): SpanRecord[] => exporter.getFinishedSpans().map(spanRecord),
    named: (name: string): SpanRecord[] =>
      exporter
        .getFinishedSpans()
        .filter((span) => span.name === name)
        .map(spanRecord),
    shutdown: () => provider.shutdown(),
  };
}

/**
 * Registers what an application's SDK setup registers globally: an AsyncLocalStorage context manager and, with
 * `propagator`, the W3C trace-context propagator. Returns the undo.
 */
export function registerGlobals(options: { propagator?: boolean; provider?: BasicTracerProvider } = {}): () => void {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  if (options.propagator === true) propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  if (options.provider !== undefined) trace.setGlobalTracerProvider(options.provider);
  return () => {
    manager.disable();
    context.disable();
    propagation.disable();
    trace.disable();
  };
}

/** The W3C `traceparent` of a recorded span. */
export function traceparentOf(span: { traceId: string; spanId: string }): string {
  return `00-${span.traceId}-${span.spanId}-01`;
}
