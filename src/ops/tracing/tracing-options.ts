import { propagation, trace, type TextMapPropagator, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';

/** The instrumentation scope of every span outboxer starts. */
export const TRACER_NAME = 'outboxer';

export interface TracingOptions {
  /** Where spans go. Default: the global tracer provider (`trace.getTracerProvider()`), looked up when a span starts, so an SDK registered later is used. */
  readonly tracerProvider?: TracerProvider | undefined;
  /**
   * How trace context is written to and read from message headers. Default: the global propagator
   * (`propagation`); when it writes no `traceparent` (none registered), outboxer writes and reads W3C `traceparent`
   * and `tracestate` itself.
   */
  readonly propagator?: TextMapPropagator | undefined;
}

export interface ProducerTracingOptions extends TracingOptions {
  /** `messaging.system` of the spans: the broker the relay publishes to (`rabbitmq`, `nats`). Required for enqueue spans. */
  readonly system: string;
  /** `messaging.destination.name` of a topic. Default: the topic itself (e.g. `` (topic) => `outbox:${topic}` `` names the exchange too). */
  readonly destinationName?: ((topic: string) => string) | undefined;
}

export interface PublisherTracingOptions extends TracingOptions {
  /** `messaging.system`. Default: the publisher's `name` (`rabbitmq`, `nats`). */
  readonly system?: string | undefined;
  readonly destinationName?: ((topic: string) => string) | undefined;
}

/** Options resolved once: a tracer, a propagator, the system and how a topic is named. */
export interface TracingSettings {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
  readonly system: string | undefined;
  readonly destinationName: (topic: string) => string;
}

const tracerProvider = z.custom<TracerProvider>((value) => typeof (value as { getTracer?: unknown } | null)?.getTracer === 'function', {
  error: 'must be a TracerProvider (an object with getTracer)',
});
const propagator = z.custom<TextMapPropagator>(
  (value) => ['inject', 'extract', 'fields'].every((method) => typeof (value as Record<string, unknown> | null)?.[method] === 'function'),
  { error: 'must be a TextMapPropagator (inject, extract, fields)' },
);
const destinationName = z.custom<(topic: string) => string>((value) => typeof value === 'function', { error: 'must be a function (topic) => string' });
const system = z.string().regex(/^[a-z][a-z0-9_.]{0,63}$/, { error: 'must be a messaging system name in lowercase, such as rabbitmq or nats' });

const schemas = {
  producer: z
    .object({ system, tracerProvider: tracerProvider.optional(), propagator: propagator.optional(), destinationName: destinationName.optional() })
    .strict(),
  publisher: z
    .object({
      system: system.optional(),
      tracerProvider: tracerProvider.optional(),
      propagator: propagator.optional(),
      destinationName: destinationName.optional(),
    })
    .strict(),
  delivery: z.object({ tracerProvider: tracerProvider.optional(), propagator: propagator.optional() }).strict(),
};

/** Resolves tracing options once: validated (unknown options refused), defaults filled in, frozen. Throws ConfigurationError. */
export function resolveTracingOptions(kind: keyof typeof schemas, input: unknown): TracingSettings {
  const parsed = schemas[kind].safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') || (issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : '');
    const problem =
      issue?.code === 'unrecognized_keys' ? `is not a known option (known: ${Object.keys(schemas[kind].shape).join(', ')})` : (issue?.message ?? 'invalid');
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `tracing option ${path.slice(0, 60) || '(root)'}: ${problem}`, {
      options: path === '' ? [] : [path.slice(0, 60)],
    });
  }
  const options = parsed.data as {
    system?: string;
    tracerProvider?: TracerProvider;
    propagator?: TextMapPropagator;
    destinationName?: (topic: string) => string;
  };
  const name = options.destinationName;
  return Object.freeze({
    tracer: (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME),
    propagator: options.propagator ?? propagation,
    system: options.system,
    destinationName: name === undefined ? (topic: string) => topic : (topic: string) => safeName(name, topic),
  });
}

/** A user's naming function must not break an enqueue or a publish: anything but a non-empty string falls back to the topic. */
function safeName(name: (topic: string) => string, topic: string): string {
  try {
    const named = name(topic);
    return typeof named === 'string' && named !== '' ? named : topic;
  } catch {
    return topic;
  }
}
