import {
  createTraceState,
  isSpanContextValid,
  isValidSpanId,
  isValidTraceId,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type SpanContext,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from '@opentelemetry/api';
import type { MessageHeaders } from '../../core/message.js';

const setter: TextMapSetter<Record<string, string>> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};

const getter: TextMapGetter<MessageHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (Object.hasOwn(carrier, key) ? carrier[key] : undefined),
};

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The headers that carry `context` to another process: what the propagator writes and, when it wrote no
 * `traceparent` (no propagator registered: the API's default propagates nothing), a W3C `traceparent` and
 * `tracestate` of the context's span. Empty when the context holds no valid span (no SDK and no parent).
 */
export function traceHeaders(context: Context, propagator: TextMapPropagator): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagator.inject(context, carrier, setter);
  if (carrier.traceparent !== undefined) return carrier;
  const span = trace.getSpanContext(context);
  if (span === undefined || !isSpanContextValid(span)) return carrier;
  carrier.traceparent = `00-${span.traceId}-${span.spanId}-${span.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
  const state = span.traceState?.serialize();
  if (state !== undefined && state !== '') carrier.tracestate = state;
  return carrier;
}

/**
 * The creation context a message carries: what the propagator extracts from its headers or, when that holds no
 * valid span, its W3C `traceparent` read directly. Undefined when the headers carry none.
 */
export function creationContextOf(headers: MessageHeaders, propagator: TextMapPropagator): Context | undefined {
  const extracted = propagator.extract(ROOT_CONTEXT, headers, getter);
  const span = trace.getSpanContext(extracted);
  if (span !== undefined && isSpanContextValid(span)) return extracted;
  const parsed = parseTraceparent(getter.get(headers, 'traceparent'), getter.get(headers, 'tracestate'));
  return parsed === undefined ? undefined : trace.setSpanContext(extracted, parsed);
}

/** A W3C trace context header as a remote span context; undefined for anything the recommendation calls invalid. */
export function parseTraceparent(traceparent: string | string[] | undefined, tracestate?: string | string[]): SpanContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff' || (version === '00' && rest !== undefined) || !isValidTraceId(traceId) || !isValidSpanId(spanId)) return undefined;
  const state = typeof tracestate === 'string' && tracestate !== '' ? createTraceState(tracestate) : undefined;
  return {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(state === undefined ? {} : { traceState: state }),
  };
}
