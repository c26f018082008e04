import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import { parseOptions } from '../core/parse-options.js';
import type { Logger } from '../core/ports.js';
import type { RetryPolicy } from '../core/retry-policy.js';
import type { InboxEntryRef } from '../core/ports/inbox-store.js';
import type { MessageRegistry } from './message-registry.js';

const positiveInt = z.number().int().positive();

const inboxOptionsSchema = z
  .object({
    consumer: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\u0000-\u001f\u007f]+$/, 'no control characters'),
    retry: z
      .object({
        baseDelayMs: positiveInt.max(3_600_000).default(1000),
        maxDelayMs: positiveInt.max(3_600_000).default(60_000),
        maxAttempts: positiveInt.max(1000).default(10),
        jitter: z.number().min(0).max(1).default(0.5),
      })
      .strict()
      .prefault({}),
  })
  .strict();

/**
 * Observers of what the inbox decides, for metrics, demos and tests. Never given a payload. `durationMs` is the
 * handler's own run time (performance.now(), whether it returned or threw); absent when no handler ran (the
 * payload was refused before, or the inbox entry could not be claimed).
 */
export interface InboxHooks {
  onProcessed?(event: InboxEntryRef & { attempts: number; durationMs?: number }): void;
  onDuplicate?(event: InboxEntryRef & { state: 'processed' | 'dead' }): void;
  onRetry?(event: InboxEntryRef & { attempts: number; error: string; retryInMs: number; durationMs?: number }): void;
  onDead?(event: InboxEntryRef & { attempts: number; reason: string; durationMs?: number }): void;
}

/**
 * The inbox's options. `consumer` (required): the name the inbox's entries are kept under, 1 to 200 characters.
 * `retry`: how a failed handling is tried again; defaults `baseDelayMs` 1000, `maxDelayMs` 60000 (both at most
 * 1 h, `maxDelayMs >= baseDelayMs`), `maxAttempts` 10 (at most 1000), `jitter` 0.5 (0 to 1).
 */
export type InboxOptionsInput<Tx> = z.input<typeof inboxOptionsSchema> & {
  /** Types, schemas and handlers; needed by `handle(message)` without an explicit handler. */
  readonly registry?: MessageRegistry<Tx> | undefined;
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
  /** Observers of what the inbox decides. Default none. */
  readonly hooks?: InboxHooks | undefined;
};

export interface InboxOptions<Tx> {
  readonly consumer: string;
  readonly retry: RetryPolicy;
  readonly registry: MessageRegistry<Tx> | undefined;
  readonly logger: Logger;
  readonly hooks: InboxHooks;
}

/** Resolves the inbox options once: documented defaults, validated, frozen. Throws ConfigurationError. */
export function resolveInboxOptions<Tx>(input: InboxOptionsInput<Tx>): InboxOptions<Tx> {
  const { registry, logger, hooks, ...rest } = input ?? ({} as InboxOptionsInput<Tx>);
  const { consumer, retry } = parseOptions(inboxOptionsSchema, rest, 'inbox', { alsoKnown: ['registry', 'logger', 'hooks'] });
  if (retry.maxDelayMs < retry.baseDelayMs) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `inbox option retry.maxDelayMs (${retry.maxDelayMs}) must be >= retry.baseDelayMs (${retry.baseDelayMs}); raise retry.maxDelayMs or lower retry.baseDelayMs`,
      { options: ['retry.maxDelayMs', 'retry.baseDelayMs'] },
    );
  }
  return Object.freeze({
    consumer,
    retry: Object.freeze({ ...retry }),
    registry,
    logger: logger ?? silentLogger,
    hooks: Object.freeze({ ...hooks }),
  });
}
