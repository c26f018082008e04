import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { createRedisPublisher, REDIS_PUBLISHER_DEFAULTS, resolveRedisPublisherOptions, type RedisPublisherOptions } from '../../src/brokers/redis/index.js';
import { captureThrow } from '../support/captured-errors.js';

const refusal = (options: unknown): ConfigurationError => {
  const error = captureThrow(() => resolveRedisPublisherOptions(options as RedisPublisherOptions));
  expect(error).toBeInstanceOf(ConfigurationError);
  expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
  return error as ConfigurationError;
};

describe('Redis publisher options', () => {
  it('resolves the documented defaults, frozen, with the credentials out of sight', () => {
    const options = resolveRedisPublisherOptions({ url: 'redis://app:s3cret%2Fx@cache.internal:6380/2' });
    expect(options).toMatchObject({
      endpoint: { host: 'cache.internal', port: 6380, tls: false, database: 2 },
      redactedUrl: 'redis://***:***@cache.internal:6380/2',
      streamPrefix: '',
      maxLen: undefined,
      ...REDIS_PUBLISHER_DEFAULTS,
    });
    expect(options.username).toBe('app');
    expect(options.password).toBe('s3cret/x');
    expect(Object.isFrozen(options)).toBe(true);
    for (const shown of [JSON.stringify(options), inspect(options)]) {
      expect(shown).not.toContain('s3cret');
      expect(shown).not.toContain('app');
    }
    expect(resolveRedisPublisherOptions({ url: 'rediss://:pw@[::1]' }).endpoint).toEqual({ host: '::1', port: 6379, tls: true, database: 0 });
  });

  it.each([
    [{}, 'url', /is required: a redis:\/\/ or rediss:\/\/ URL/],
    [{ url: 'http://127.0.0.1:6379' }, 'url', /must start with redis:\/\/ or rediss:\/\//],
    [{ url: 'redis://127.0.0.1/abc' }, 'url', /database number such as \/0/],
    [{ url: 'redis://127.0.0.1?db=1' }, 'url', /without query or fragment/],
    [{ url: 'redis://onlyuser@127.0.0.1' }, 'url', /without a password/],
    [{ url: 'redis://x', streamPrefix: '' }, 'streamPrefix', /streamPrefix/],
    [{ url: 'redis://x', streamPrefix: 'a\nb' }, 'streamPrefix', /control characters/],
    [{ url: 'redis://x', maxLen: 0 }, 'maxLen', /maxLen/],
    [{ url: 'redis://x', maxLen: 1.5 }, 'maxLen', /maxLen/],
    [{ url: 'redis://x', publishTimeoutMs: 0 }, 'publishTimeoutMs', /publishTimeoutMs/],
    [{ url: 'redis://x', waitReplicas: -1 }, 'waitReplicas', /waitReplicas/],
    [{ url: 'redis://x', waitTimeoutMs: 0 }, 'waitTimeoutMs', /waitTimeoutMs/],
    [{ url: 'redis://x', clientName: 'has space' }, 'clientName', /without spaces/],
    [{ url: 'redis://x', logger: {} }, 'logger', /debug, info, warn and error/],
    [{ url: 'redis://x', streamPrefx: 'a:' }, 'streamPrefx', /is not an option \(known: url, logger, streamPrefix/],
  ])('refuses %j naming the option and the fix', (options, option, message) => {
    const error = refusal(options);
    expect(error.message).toMatch(new RegExp(`^redis publisher option ${option}`));
    expect(error.message).toMatch(message);
    expect(error.options).toContain(option);
  });

  it('refuses waitTimeoutMs at or above publishTimeoutMs when waiting for replicas, naming both', () => {
    const error = refusal({ url: 'redis://x', waitReplicas: 1, waitTimeoutMs: 5000, publishTimeoutMs: 5000 });
    expect(error.message).toMatch(/must be below publishTimeoutMs \(5000\).*lower waitTimeoutMs or raise publishTimeoutMs/);
    expect(error.options).toEqual(['waitTimeoutMs', 'publishTimeoutMs']);
    expect(() => resolveRedisPublisherOptions({ url: 'redis://x', waitReplicas: 1, waitTimeoutMs: 4999, publishTimeoutMs: 5000 })).not.toThrow();
  });

  it('never echoes the password of a refused URL', () => {
    for (const url of ['http://user:hunter2secret@host', 'redis://user:hunter2secret@host/x1', 'redis://user:hunter2secret@host:99999']) {
      const error = captureThrow(() => createRedisPublisher({ url }));
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(`${(error as Error).message}\n${(error as Error).stack ?? ''}\n${JSON.stringify(error)}`).not.toContain('hunter2secret');
    }
  });
});
