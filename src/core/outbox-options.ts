import { z } from 'zod';
import { ConfigurationError } from './errors.js';
import { parseOptions, wholeNumber } from './parse-options.js';
import type { CommitNotifier, OutgoingValidator } from './ports.js';
import type { EnqueueInstrumentation } from './ports/enqueue-instrumentation.js';
import { type RouteInput, Routes } from './routes.js';

export interface OutboxOptions {
  /** Largest body accepted at enqueue, in the bytes that will be published. Default 256 KiB; keep it at or below your broker's limit. */
  readonly maxPayloadBytes?: number;
  /** Also wakes relays in other processes on `notifyCommitted()` (e.g. `pgCommitNotifier`). Default none. */
  readonly commitNotifier?: CommitNotifier;
  /** Validates every payload against the schema of its type before it is stored (e.g. a `MessageRegistry`). Default none. */
  readonly registry?: OutgoingValidator;
  /**
   * Observes every enqueue, e.g. `createOtelInstrumentation(...).enqueue` from `outboxer/otel`: a producer span per
   * message, its context stored in the message's `traceparent` header. Default none (nothing is added).
   */
  readonly instrumentation?: EnqueueInstrumentation;
  /**
   * Fan-out: topics to named destinations (`[{ topic: 'orders.*', to: ['default', 'partner'] }]`, first match
   * wins). `enqueue` writes one row per destination of a message that names none (docs/fan-out.md). Default none:
   * every message goes to the relay's own publisher.
   */
  readonly routes?: readonly RouteInput[];
}

export interface ResolvedOutboxOptions {
  readonly maxPayloadBytes: number;
  readonly commitNotifier: CommitNotifier | undefined;
  readonly registry: OutgoingValidator | undefined;
  readonly instrumentation: EnqueueInstrumentation | undefined;
  readonly routes: Routes;
}

export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;

const outboxOptionsSchema = z
  .object({
    maxPayloadBytes: wholeNumber(1, Number.MAX_SAFE_INTEGER, 'bytes').default(DEFAULT_MAX_PAYLOAD_BYTES),
    commitNotifier: z.custom<CommitNotifier>().optional(),
    registry: z.custom<OutgoingValidator>().optional(),
    instrumentation: z
      .custom<EnqueueInstrumentation>((value) => typeof (value as Partial<EnqueueInstrumentation> | null)?.enqueue === 'function', {
        error: 'must have an enqueue(messages, store) method (e.g. createOtelInstrumentation(...).enqueue from outboxer/otel)',
      })
      .optional(),
    routes: z.custom<readonly RouteInput[]>().optional(),
  })
  .strict();

/** Resolves the outbox's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option and the fix. */
export function resolveOutboxOptions(input: OutboxOptions = {}): ResolvedOutboxOptions {
  if ((input as { maxConcurrentHandoffs?: unknown }).maxConcurrentHandoffs !== undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      "outbox option maxConcurrentHandoffs: it sized engine v1's in-process hand-off, which this version no longer has: remove it (outbox.transaction wakes the relay after the commit)",
      { options: ['maxConcurrentHandoffs'] },
    );
  }
  const options = parseOptions(outboxOptionsSchema, input, 'outbox');
  return Object.freeze({
    maxPayloadBytes: options.maxPayloadBytes,
    commitNotifier: options.commitNotifier,
    registry: options.registry,
    instrumentation: options.instrumentation,
    routes: new Routes(options.routes),
  });
}
