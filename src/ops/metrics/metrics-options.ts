import { Registry } from 'prom-client';
import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';

/** Seconds from a message's insert (database clock) to its broker's confirmation: from a fast path to a backlog. */
export const DEFAULT_COMMIT_TO_CONFIRM_BUCKETS: readonly number[] = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]);

const bucketsSchema = z
  .array(z.number().positive())
  .min(1)
  .max(50)
  .refine((buckets) => buckets.every((bound, i) => i === 0 || bound > (buckets[i - 1] as number)), 'buckets must be in strictly increasing order');

const metricsOptionsSchema = z
  .object({
    topicLabel: z.boolean().default(false),
    gaugeMaxAgeMs: z.number().int().min(0).max(3_600_000).default(5000),
    commitToConfirmBuckets: bucketsSchema.default([...DEFAULT_COMMIT_TO_CONFIRM_BUCKETS]),
  })
  .strict();

export interface OutboxerMetricsOptions {
  /** Where the metrics are registered. Default: a new Registry of its own (never prom-client's global one). */
  readonly registry?: Registry;
  /**
   * Default false: no `topic` label anywhere. True: the counters and histograms get a `topic` label (at most
   * MAX_TOPIC_LABELS distinct topics; later ones are counted under `topic="(other)"`). Never a key, id or payload.
   */
  readonly topicLabel?: boolean;
  /** Default 5000: the store's gauges are read at scrape time at most this often, and served from a cache otherwise. */
  readonly gaugeMaxAgeMs?: number;
  /** Upper bounds of `outboxer_commit_to_confirm_seconds`, in seconds, increasing. Default DEFAULT_COMMIT_TO_CONFIRM_BUCKETS. */
  readonly commitToConfirmBuckets?: readonly number[];
}

export interface ResolvedMetricsOptions {
  readonly registry: Registry;
  readonly topicLabel: boolean;
  readonly gaugeMaxAgeMs: number;
  readonly commitToConfirmBuckets: readonly number[];
}

/** Resolves the metrics options once: documented defaults, validated, frozen. Throws ConfigurationError. */
export function resolveMetricsOptions(input: OutboxerMetricsOptions = {}): ResolvedMetricsOptions {
  const { registry, ...rest } = input;
  if (registry !== undefined && !isRegistry(registry)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      'metrics option registry: pass a prom-client Registry (new Registry()), or leave it out for one of its own',
      {
        options: ['registry'],
      },
    );
  }
  const parsed = metricsOptionsSchema.safeParse({
    ...rest,
    ...(rest.commitToConfirmBuckets === undefined ? {} : { commitToConfirmBuckets: [...rest.commitToConfirmBuckets] }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') ?? '';
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `metrics option ${path || '(root)'}: ${issue?.message ?? 'invalid'}`, {
      options: path === '' ? [] : [path],
    });
  }
  const options = parsed.data;
  return Object.freeze({
    registry: registry ?? new Registry(),
    topicLabel: options.topicLabel,
    gaugeMaxAgeMs: options.gaugeMaxAgeMs,
    commitToConfirmBuckets: Object.freeze([...options.commitToConfirmBuckets]),
  });
}

/** Structural, so a registry from another copy of prom-client (a duplicated install) is taken as well. */
function isRegistry(value: unknown): value is Registry {
  const candidate = value as Partial<Record<'registerMetric' | 'metrics' | 'removeSingleMetric', unknown>> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.registerMetric === 'function' &&
    typeof candidate.metrics === 'function' &&
    typeof candidate.removeSingleMetric === 'function'
  );
}
