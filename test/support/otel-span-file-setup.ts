/**
 * An application's OpenTelemetry setup for a CLI process, given to node with `--import` before the CLI runs, as
 * docs/tracing.md ("The relay daemon") shows: a BasicTracerProvider, the W3C propagator and an async context manager
 * registered globally. Its exporter (behind a batch processor) appends every finished span as one JSON line (a SpanRecord) to the file that
 * OTEL_TEST_SPANS_FILE names, so the test reads the spans of a process it only started.
 */
import { appendFileSync } from 'node:fs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { registerGlobals, spanRecord } from './tracing-harness.js';

const file = process.env.OTEL_TEST_SPANS_FILE;
if (file === undefined || file === '') throw new Error('otel-span-file-setup: set OTEL_TEST_SPANS_FILE to the file the spans go to');

const exporter: SpanExporter = {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    appendFileSync(file, spans.map((span) => `${JSON.stringify(spanRecord(span))}\n`).join(''));
    done({ code: ExportResultCode.SUCCESS });
  },
  shutdown: async () => undefined,
};

// A batch processor, as in production, that never exports on its own timer during a test: the spans reach the
// file only when the process flushes the provider (the daemon does so once its relay stopped).
const processor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 600_000 });
registerGlobals({ propagator: true, provider: new BasicTracerProvider({ spanProcessors: [processor] }) });
