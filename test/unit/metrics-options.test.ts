import { register as globalRegistry, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { DEFAULT_COMMIT_TO_CONFIRM_BUCKETS, OutboxerMetrics, type OutboxerMetricsOptions } from '../../src/ops/metrics/index.js';
import { resolveMetricsOptions } from '../../src/ops/metrics/metrics-options.js';

function optionError(input: unknown): ConfigurationError {
  try {
    resolveMetricsOptions(input as OutboxerMetricsOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
    return error as ConfigurationError;
  }
  throw new Error(`resolveMetricsOptions accepted ${JSON.stringify(input)}`);
}

describe('resolveMetricsOptions', () => {
  it('applies the documented defaults, with a registry of its own (never the global one), frozen', () => {
    const options = resolveMetricsOptions();
    expect(options).toMatchObject({ topicLabel: false, gaugeMaxAgeMs: 5000, commitToConfirmBuckets: DEFAULT_COMMIT_TO_CONFIRM_BUCKETS });
    expect(options.registry).toBeInstanceOf(Registry);
    expect(options.registry).not.toBe(globalRegistry);
    expect(resolveMetricsOptions().registry).not.toBe(options.registry);
    expect(Object.isFrozen(options)).toBe(true);
    expect(Object.isFrozen(options.commitToConfirmBuckets)).toBe(true);
  });

  it('keeps the given registry, label choice, cache age and buckets (a copy of them)', () => {
    const registry = new Registry();
    const buckets = [0.1, 1, 10];
    const options = resolveMetricsOptions({ registry, topicLabel: true, gaugeMaxAgeMs: 0, commitToConfirmBuckets: buckets });
    expect(options).toMatchObject({ registry, topicLabel: true, gaugeMaxAgeMs: 0, commitToConfirmBuckets: [0.1, 1, 10] });
    buckets.push(100);
    expect(options.commitToConfirmBuckets).toEqual([0.1, 1, 10]);
  });

  it.each([
    [{ gaugeMaxAgeMs: -1 }, 'gaugeMaxAgeMs'],
    [{ gaugeMaxAgeMs: 1.5 }, 'gaugeMaxAgeMs'],
    [{ topicLabel: 'yes' }, 'topicLabel'],
    [{ commitToConfirmBuckets: [] }, 'commitToConfirmBuckets'],
    [{ commitToConfirmBuckets: [1, 0.5] }, 'commitToConfirmBuckets'],
    [{ commitToConfirmBuckets: [0, 1] }, 'commitToConfirmBuckets.0'],
    [{ labels: { env: 'prod' } }, '(root)'],
    [{ registry: {} }, 'registry'],
  ])('refuses %j, naming the option', (input, option) => {
    expect(optionError(input).message).toContain(`metrics option ${option}`);
  });

  it('refuses a registry that already holds outboxer metrics, with what to do instead', () => {
    const registry = new Registry();
    new OutboxerMetrics({ registry });
    expect(() => new OutboxerMetrics({ registry })).toThrow(/already holds a metric named outboxer_\w+; make one OutboxerMetrics per registry/);
  });

  it('registers into the given registry, next to the metrics the user has there', async () => {
    const registry = new Registry();
    const metrics = new OutboxerMetrics({ registry });
    expect(metrics.registry).toBe(registry);
    expect(metrics.contentType).toBe(registry.contentType);
    expect(await metrics.metrics()).toBe(await registry.metrics());
    expect(await metrics.metrics()).toContain('# TYPE outboxer_published_total counter');
  });
});
