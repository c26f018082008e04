import type { Publisher } from '../../core/ports.js';
import { CliFailure } from './errors.js';

/** Wraps the daemon's publisher in `publish` spans (`tracePublisher` of outboxer/otel), and flushes them at exit. */
export interface PublisherTracer {
  wrap(publisher: Publisher): Publisher;
  /** Exports the spans the user's SDK still buffers; called once the relay stopped, before the process exits. */
  flush(): Promise<void>;
}

const MISSING_OTEL_API =
  '--tracing needs @opentelemetry/api next to outboxer: npm install @opentelemetry/api, and register an OpenTelemetry SDK before the CLI runs (node --import ./otel-setup.mjs node_modules/.bin/outboxer relay --tracing; docs/tracing.md, The relay daemon)';

/**
 * Loads outboxer/otel for `relay --tracing`, and only then: `@opentelemetry/api` is an optional peer, never loaded
 * without the flag. Spans go to the global tracer provider, which the user's SDK registered before the CLI ran (a
 * module given to `node --import`); without one they are not recorded. Throws CliFailure when the API is missing.
 */
export async function loadPublisherTracer(): Promise<PublisherTracer> {
  try {
    const { flushTracing, tracePublisher } = await import('../tracing/index.js');
    return { wrap: (publisher) => tracePublisher(publisher), flush: () => flushTracing() };
  } catch (error) {
    const missing = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes('@opentelemetry/api');
    if (missing) throw new CliFailure('OUTBOXER_MISSING_DEPENDENCY', MISSING_OTEL_API);
    throw error;
  }
}
