import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Logger } from '../../src/core/ports.js';
import { resolveRelayOptions, type RelayOptionsInput } from '../../src/core/relay-options.js';

function optionError(input: unknown): ConfigurationError {
  try {
    resolveRelayOptions(input as RelayOptionsInput);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
    return error as ConfigurationError;
  }
  throw new Error(`resolveRelayOptions accepted ${JSON.stringify(input)}`);
}

describe('resolveRelayOptions: defaults', () => {
  it('applies the documented defaults (those of relayOptionsSchema)', () => {
    const { owner, logger, hooks, ...rest } = resolveRelayOptions();
    expect(rest).toEqual({
      engine: 'v2',
      batchSize: 500,
      lanes: 3,
      maxInFlight: 256,
      leaseMs: 30_000,
      publishTimeoutMs: 10_000,
      pollIntervalMs: 250,
      maxPollIntervalMs: 2000,
      errorBackoffMs: 500,
      maxErrorBackoffMs: 15_000,
      handoverCheckMs: 250,
      brokerTroubleAfterMs: 10_000,
      housekeepingIntervalMs: 60_000,
      housekeepingBatchSize: 1000,
      retry: { baseDelayMs: 1000, maxDelayMs: 300_000, maxAttempts: 10, jitter: 0.5 },
      destinations: {},
    });
    expect(owner).toMatch(new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${process.pid}/[0-9a-f]{8}$`));
    expect(logger).toBe(silentLogger);
    expect(hooks).toEqual({});
  });

  it('gives every relay its own owner unless one is set', () => {
    expect(resolveRelayOptions().owner).not.toBe(resolveRelayOptions().owner);
    expect(resolveRelayOptions({ owner: 'relay-a' }).owner).toBe('relay-a');
  });

  it('fills retry defaults around a partial retry object', () => {
    expect(resolveRelayOptions({ retry: { maxAttempts: 3 } }).retry).toEqual({
      baseDelayMs: 1000,
      maxDelayMs: 300_000,
      maxAttempts: 3,
      jitter: 0.5,
    });
  });

  it('keeps given values, logger and hooks', () => {
    const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
    const onDead = () => undefined;
    const options = resolveRelayOptions({ batchSize: 5, leaseMs: 5000, publishTimeoutMs: 1000, logger, hooks: { onDead } });
    expect(options).toMatchObject({ batchSize: 5, leaseMs: 5000, publishTimeoutMs: 1000 });
    expect(options.logger).toBe(logger);
    expect(options.hooks.onDead).toBe(onDead);
  });

  it('returns a frozen result, retry and hooks included, and does not share the caller objects', () => {
    const retry = { maxAttempts: 4 };
    const hooks = {};
    const options = resolveRelayOptions({ retry, hooks });
    expect(Object.isFrozen(options)).toBe(true);
    expect(Object.isFrozen(options.retry)).toBe(true);
    expect(Object.isFrozen(options.hooks)).toBe(true);
    expect(options.hooks).not.toBe(hooks);
    retry.maxAttempts = 99;
    expect(options.retry.maxAttempts).toBe(4);
    expect(Object.isFrozen(retry)).toBe(false);
  });
});

describe('resolveRelayOptions: invalid options', () => {
  const numeric = [
    'batchSize',
    'maxInFlight',
    'leaseMs',
    'publishTimeoutMs',
    'pollIntervalMs',
    'maxPollIntervalMs',
    'errorBackoffMs',
    'maxErrorBackoffMs',
    'housekeepingIntervalMs',
    'housekeepingBatchSize',
  ];
  const bad: [string, unknown][] = [
    ['negative', -1],
    ['zero', 0],
    ['fractional', 1.5],
    ['NaN', Number.NaN],
    ['a string', '100'],
    ['Infinity', Number.POSITIVE_INFINITY],
  ];

  for (const name of numeric) {
    it.each(bad)(`refuses ${name} that is %s and names it`, (_label, value) => {
      expect(optionError({ [name]: value }).message).toContain(name);
    });
  }

  for (const name of ['baseDelayMs', 'maxDelayMs', 'maxAttempts']) {
    it.each(bad)(`refuses retry.${name} that is %s and names it`, (_label, value) => {
      expect(optionError({ retry: { [name]: value } }).message).toContain(`retry.${name}`);
    });
  }

  it.each([
    ['batchSize', { batchSize: 10_001 }],
    ['maxInFlight', { maxInFlight: 10_001 }],
    ['leaseMs', { leaseMs: 999 }],
    ['housekeepingBatchSize', { housekeepingBatchSize: 100_001 }],
    ['retry.maxAttempts', { retry: { maxAttempts: 1001 } }],
    ['retry.jitter', { retry: { jitter: 1.01 } }],
    ['retry.jitter', { retry: { jitter: -0.1 } }],
    ['retry.jitter', { retry: { jitter: '0.5' } }],
    ['owner', { owner: '' }],
    ['owner', { owner: 'o'.repeat(201) }],
    ['retry', { retry: null }],
  ])('refuses an out-of-range %s', (name, input) => {
    expect(optionError(input).message).toContain(name);
  });

  it('takes engine v2 (the default); refuses v1, which was removed, and anything else, naming it', () => {
    expect(resolveRelayOptions({}).engine).toBe('v2');
    expect(resolveRelayOptions({ engine: 'v2' }).engine).toBe('v2');
    expect(optionError({ engine: 'v1' }).message).toContain('engine v1 was removed');
    expect(optionError({ engine: 'v1' }).options).toEqual(['engine']);
    expect(optionError({ engine: 'v3' }).message).toContain('engine');
    expect(optionError({ engine: 'v3' }).options).toEqual(['engine']);
  });

  it.each(['maxHandoff', 'fullSweepIntervalMs'])('refuses %s, an option of the removed engine v1, saying what to do', (option) => {
    const error = optionError({ [option]: 1000 });
    expect(error.message).toContain('engine v1');
    expect(error.message).toContain('remove it');
    expect(error.options).toEqual([option]);
  });

  it('refuses leaseMs under 3 x publishTimeoutMs, naming both', () => {
    const error = optionError({ leaseMs: 5000, publishTimeoutMs: 2000 });
    expect(error.message).toContain('at least 3 x publishTimeoutMs');
    expect(error.options).toEqual(['leaseMs', 'publishTimeoutMs']);
    expect(optionError({ leaseMs: 5000 }).options).toEqual(['leaseMs', 'publishTimeoutMs']); // default timeout 10 s
    expect(resolveRelayOptions({ leaseMs: 6000, publishTimeoutMs: 2000 }).leaseMs).toBe(6000);
    expect(resolveRelayOptions({}).leaseMs).toBe(30_000); // the defaults are exactly 3 x
  });

  it('refuses maxPollIntervalMs < pollIntervalMs, and accepts them equal', () => {
    expect(optionError({ pollIntervalMs: 500, maxPollIntervalMs: 499 }).message).toContain('maxPollIntervalMs');
    expect(optionError({ pollIntervalMs: 2001 }).message).toContain('maxPollIntervalMs'); // default max 2 s
    expect(resolveRelayOptions({ pollIntervalMs: 500, maxPollIntervalMs: 500 }).maxPollIntervalMs).toBe(500);
  });

  it('refuses retry.maxDelayMs < retry.baseDelayMs, and accepts them equal', () => {
    expect(optionError({ retry: { baseDelayMs: 2000, maxDelayMs: 1999 } }).message).toContain('retry.maxDelayMs');
    expect(resolveRelayOptions({ retry: { baseDelayMs: 2000, maxDelayMs: 2000 } }).retry.maxDelayMs).toBe(2000);
  });

  it('accepts jitter at both ends', () => {
    expect(resolveRelayOptions({ retry: { jitter: 0 } }).retry.jitter).toBe(0);
    expect(resolveRelayOptions({ retry: { jitter: 1 } }).retry.jitter).toBe(1);
  });

  // Same rule as pollIntervalMs/maxPollIntervalMs: otherwise the error backoff shrinks after the first failure.
  it('refuses maxErrorBackoffMs < errorBackoffMs', () => {
    expect(optionError({ errorBackoffMs: 5000, maxErrorBackoffMs: 1000 }).message).toContain('maxErrorBackoffMs');
  });
});

describe('relay options: the options at fault', () => {
  const faultOf = (input: Parameters<typeof resolveRelayOptions>[0]): readonly string[] => {
    try {
      resolveRelayOptions(input);
    } catch (error) {
      if (error instanceof ConfigurationError) return error.options;
      throw error;
    }
    throw new Error('expected a ConfigurationError');
  };

  it('names the option of a bad value, and both options of a rule across two', () => {
    expect(faultOf({ lanes: 0 })).toEqual(['lanes']);
    expect(faultOf({ retry: { maxAttempts: 0 } })).toEqual(['retry.maxAttempts']);
    expect(faultOf({ leaseMs: 10_000, publishTimeoutMs: 6_000 })).toEqual(['leaseMs', 'publishTimeoutMs']);
    expect(faultOf({ retry: { baseDelayMs: 500, maxDelayMs: 100 } })).toEqual(['retry.maxDelayMs', 'retry.baseDelayMs']);
  });
});
