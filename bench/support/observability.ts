import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { Publisher, RelayHealth, RelayHooks } from '../../src/index.js';
import { OutboxerMetrics } from '../../src/ops/metrics/index.js';
import { createEnqueueTracing, tracePublisher, type EnqueueInstrumentation } from '../../src/ops/tracing/index.js';
import type { OutboxOperator } from '../../src/core/ports.js';

/** Ends every span it is given: the SDK does all its work (sampling, attributes, batching), nothing is kept. */
class DiscardingExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.exported += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

/**
 * What a production service would turn on: `OutboxerMetrics` (relay hooks, relay and store gauges) scraped
 * every second, and OpenTelemetry tracing through the SDK (a batch processor, as in production) on enqueue and
 * on the relay's publisher. The bench's `outboxer+ops` contender runs with this; `outboxer` without.
 */
export interface Observability {
  /** For the writers' `Outbox`: a `create` span per message, its context stored in the row (absent with tracing off). */
  readonly enqueue?: EnqueueInstrumentation;
  readonly hooks: RelayHooks;
  observe(relay: { health(): RelayHealth }, store: Pick<OutboxOperator, 'gauges' | 'stats'>): void;
  wrap(publisher: Publisher): Publisher;
  /** Spans exported and scrapes made, to show the run did the work. */
  close(): Promise<{ readonly spans: number; readonly scrapes: number }>;
}

/**
 * Which parts `outboxer+ops` turns on: `BENCH_OPS=metrics`, `BENCH_OPS=tracing`, or both (the default); with
 * `sampled`, the SDK records one trace in ten (`ParentBased(TraceIdRatioBased(0.1))`, a common production
 * setting) instead of every one.
 */
function parts(): { readonly metrics: boolean; readonly tracing: boolean; readonly sampled: boolean } {
  const named = (process.env.BENCH_OPS ?? 'metrics,tracing').split(',');
  return { metrics: named.includes('metrics'), tracing: named.includes('tracing'), sampled: named.includes('sampled') };
}

/** `system` is `messaging.system` of the enqueue spans (the publish spans take the publisher's name); its value costs nothing. */
export function benchObservability(system: string): Observability {
  const on = parts();
  const metrics = new OutboxerMetrics();
  const exporter = new DiscardingExporter();
  const sampler = on.sampled ? { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) }) } : {};
  const provider = new BasicTracerProvider({ ...sampler, spanProcessors: [new BatchSpanProcessor(exporter)] });

  const unobserve: (() => void)[] = [];
  let scrapes = 0;
  const scraper = setInterval(() => {
    if (on.metrics) void metrics.metrics().then(() => scrapes++);
  }, 1000);
  return {
    ...(on.tracing ? { enqueue: createEnqueueTracing({ system, tracerProvider: provider }) } : {}),
    hooks: on.metrics ? metrics.relayHooks() : {},
    observe(relay, store) {
      if (on.metrics) unobserve.push(metrics.observeRelay(relay), metrics.observeStore(store));
    },
    wrap: (publisher) => (on.tracing ? tracePublisher(publisher, { tracerProvider: provider }) : publisher),
    async close() {
      clearInterval(scraper);
      for (const stop of unobserve.splice(0)) stop();
      await provider.forceFlush();
      await provider.shutdown();
      return { spans: exporter.exported, scrapes };
    },
  };
}
