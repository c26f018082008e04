import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { DestinationInput } from './destinations.js';
import { ConfigurationError } from './errors.js';
import { silentLogger } from './logger.js';
import type { Logger, WakeSignal } from './ports.js';
import { resolveLeaseTiming } from './partitions/lease-clock.js';
import type { RetryPolicy } from './retry-policy.js';

const positiveInt = z.number().int().positive();

const relayOptionsSchema = z
  .object({
    engine: z.literal('v2').default('v2'),
    owner: z.string().min(1).max(200).optional(),
    batchSize: positiveInt.max(10_000).default(500),
    maxInFlight: positiveInt.max(10_000).default(256),
    lanes: positiveInt.max(16).default(3),
    leaseMs: positiveInt.min(1000).default(30_000),
    publishTimeoutMs: positiveInt.default(10_000),
    pollIntervalMs: positiveInt.default(250),
    maxPollIntervalMs: positiveInt.default(2000),
    errorBackoffMs: positiveInt.default(500),
    maxErrorBackoffMs: positiveInt.default(15_000),
    handoverCheckMs: z.number().int().min(0).max(60_000).default(250),
    brokerTroubleAfterMs: positiveInt.optional(),
    housekeepingIntervalMs: positiveInt.default(60_000),
    housekeepingBatchSize: positiveInt.max(100_000).default(1000),
    retry: z
      .object({
        baseDelayMs: positiveInt.default(1000),
        maxDelayMs: positiveInt.default(300_000),
        maxAttempts: positiveInt.max(1000).default(10),
        jitter: z.number().min(0).max(1).default(0.5),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type RelayOptionsInput = z.input<typeof relayOptionsSchema> & {
  readonly logger?: Logger | undefined;
  readonly hooks?: RelayHooks | undefined;
  /** Wakes the relay when another process commits (e.g. `pgListenWakeSignal`); polling remains the fallback. */
  readonly wakeSignal?: WakeSignal | undefined;
  /**
   * Fan-out: the named destinations this relay publishes to besides its own publisher (`default`, rows without a
   * destination), each with its publisher and envelope (docs/fan-out.md). With any, a destination whose broker is
   * out of reach is paused alone. Default none.
   */
  readonly destinations?: Readonly<Record<string, DestinationInput>> | undefined;
};

/** Observers of what the relay does: metrics, demos and tests hang off these. */
export interface RelayHooks {
  /**
   * The broker confirmed it. `createdAt` is the row's insert time by the database clock (commit-to-confirm latency).
   * `destination` is `default` for the relay's own publisher, else the named destination (in every event).
   */
  onPublished?(event: { id: string; topic: string; key: string | null; attempts: number; createdAt: Date; destination: string }): void;
  onRetry?(event: { id: string; topic: string; attempts: number; error: string; retryInMs: number; destination: string }): void;
  onDead?(event: { id: string; topic: string; attempts: number; reason: string; destination: string }): void;
  /** A partition's completion was fenced: another relay took the partition over, and `marked` (0) of `expected` outcomes were written. */
  onFenced?(event: { expected: number; marked: number }): void;
  /** `lease` and `read`: a partition-lease statement or a read failed (the loop backs off); `mark`: writing outcomes failed. */
  onError?(event: { stage: 'publish' | 'mark' | 'housekeeping' | 'lease' | 'read'; error: string }): void;
  /**
   * The table grants no partition: a resize to `resizeTo` partitions waits for every partition to be given back.
   * Called once per wait; the relay drains, releases what it holds, keeps its membership and acquires once the
   * resize ends.
   */
  onWaitingForResize?(event: { resizeTo: number | null }): void;
  /**
   * A topic's destination is missing (no route, exchange or stream): its messages wait without using up
   * attempts, and the topic is tried again after `retryInMs`, then with doubling backoff up to
   * `maxErrorBackoffMs`. Called once per episode, when it begins. With named destinations (fan-out), `topic` is
   * `<topic>@<destination>` for a named destination's topic, and `*@<destination>` when that destination's broker
   * is out of reach as a whole.
   */
  onTopicPaused?(event: { topic: string; error: string; retryInMs: number; destination: string }): void;
  /** A paused topic published again: its destination appeared. Ends the episode. */
  onTopicResumed?(event: { topic: string; pausedMs: number; destination: string }): void;
}

export interface RelayOptions {
  /**
   * Always `v2`: relays lease partitions (docs/design/lease-protocol.md), and `leaseMs` must be at least
   * 3 x `publishTimeoutMs`. Engine v1, removed before any release, is refused.
   */
  readonly engine: 'v2';
  readonly owner: string;
  readonly batchSize: number;
  readonly maxInFlight: number;
  /**
   * Batches in flight at once while a backlog lasts or a batch has published for `pollIntervalMs` (one otherwise): one
   * batch's database work overlaps another's publishing.
   */
  readonly lanes: number;
  readonly leaseMs: number;
  readonly publishTimeoutMs: number;
  readonly pollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  readonly errorBackoffMs: number;
  readonly maxErrorBackoffMs: number;
  /**
   * Between beats, how often the relay reads the group (who is live, leaving or in broker trouble; how many
   * partitions are free) and beats at once when it changed, so a join, leave or release is acted on within one
   * check instead of one heartbeat. 0 turns the check off (hand-overs then wait for the beats, lease/3).
   */
  readonly handoverCheckMs: number;
  /**
   * How long the broker may be unreachable (the publisher not connected, or every publish finding it
   * unavailable) before this relay reports trouble and gives its partitions to healthy relays. Default lease/3.
   */
  readonly brokerTroubleAfterMs: number;
  readonly housekeepingIntervalMs: number;
  readonly housekeepingBatchSize: number;
  readonly retry: RetryPolicy;
  readonly logger: Logger;
  readonly hooks: RelayHooks;
  readonly wakeSignal: WakeSignal | undefined;
  /** The named destinations as given (the relay resolves them with its own publisher: `Destinations`). */
  readonly destinations: Readonly<Record<string, DestinationInput>>;
}

/** Resolves the relay's options once: documented defaults, validated, frozen. */
export function resolveRelayOptions(input: RelayOptionsInput = {}): RelayOptions {
  const { logger, hooks, wakeSignal, destinations, ...rest } = input;
  refuseRemovedOptions(rest);
  const parsed = relayOptionsSchema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') ?? '';
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `relay option ${path || '(root)'}: ${issue?.message ?? 'invalid'}`, {
      options: path === '' ? [] : [path],
    });
  }
  const options = parsed.data;
  leaseTimingForV2(options.leaseMs, options.publishTimeoutMs);
  if (options.maxErrorBackoffMs < options.errorBackoffMs) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'relay option maxErrorBackoffMs must be >= errorBackoffMs', {
      options: ['maxErrorBackoffMs', 'errorBackoffMs'],
    });
  }
  if (options.maxPollIntervalMs < options.pollIntervalMs) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'relay option maxPollIntervalMs must be >= pollIntervalMs', {
      options: ['maxPollIntervalMs', 'pollIntervalMs'],
    });
  }
  if (options.retry.maxDelayMs < options.retry.baseDelayMs) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'relay option retry.maxDelayMs must be >= retry.baseDelayMs', {
      options: ['retry.maxDelayMs', 'retry.baseDelayMs'],
    });
  }
  return Object.freeze({
    ...options,
    owner: options.owner ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
    brokerTroubleAfterMs: options.brokerTroubleAfterMs ?? Math.floor(options.leaseMs / 3),
    retry: Object.freeze({ ...options.retry }),
    logger: logger ?? silentLogger,
    hooks: Object.freeze({ ...hooks }),
    wakeSignal,
    destinations: Object.freeze({ ...destinations }),
  });
}

/** Options of engine v1, which this version no longer has: each refused with what to do instead of a bare "unrecognized key". */
const REMOVED_OPTIONS: Readonly<Record<string, string>> = Object.freeze({
  maxHandoff: 'it sized the hand-off of engine v1, which this version no longer has; remove it',
  fullSweepIntervalMs: "it timed engine v1's claims, which this version no longer has; remove it",
});

function refuseRemovedOptions(input: object): void {
  const given = input as Record<string, unknown>;
  if (given.engine === 'v1') {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      "relay option engine: engine v1 was removed before any release of outboxer; run engine 'v2' (the default), after `outboxer migrate`",
      { options: ['engine'] },
    );
  }
  for (const [option, why] of Object.entries(REMOVED_OPTIONS)) {
    if (given[option] !== undefined) throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `relay option ${option}: ${why}`, { options: [option] });
  }
}

/** Engine v2 trusts 0.8 of a lease and beats three times per lease: `leaseMs >= 3 x publishTimeoutMs`. */
function leaseTimingForV2(leaseMs: number, publishTimeoutMs: number): void {
  try {
    resolveLeaseTiming({ leaseMs, publishTimeoutMs });
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    throw new ConfigurationError(error.code, `${error.message} (engine v2)`, { options: ['leaseMs', 'publishTimeoutMs'] });
  }
}
