import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import type { OutboxOperator } from '../../src/core/ports/outbox-operator.js';
import { checkOpsServerSettings, DEFAULT_OPS_PORT, type OpsServerOptions, resolveOpsServerOptions } from '../../src/ops/http/ops-server-options.js';

/** An operator whose methods are never called here: only its shape is checked. */
const operator = {
  stats: () => Promise.reject(new Error('not called')),
  listDead: () => Promise.reject(new Error('not called')),
  retryDead: () => Promise.reject(new Error('not called')),
  purgeDead: () => Promise.reject(new Error('not called')),
} as unknown as OutboxOperator;
const token = 'T0ken-with-at-least-16-chars';

function refusal(options: OpsServerOptions): ConfigurationError {
  try {
    resolveOpsServerOptions(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('accepted');
}

describe('resolveOpsServerOptions: defaults, validated, frozen', () => {
  it('fills in the documented defaults: loopback, port 9465, no token, payloads hidden, silent', () => {
    const resolved = resolveOpsServerOptions({ operator });
    expect(resolved).toMatchObject({
      operator,
      relay: undefined,
      metrics: undefined,
      host: '127.0.0.1',
      port: DEFAULT_OPS_PORT,
      token: undefined,
      exposePayloads: false,
    });
    expect(DEFAULT_OPS_PORT).toBe(9465);
    expect(resolved.logger).toBe(silentLogger);
    expect(Object.isFrozen(resolved)).toBe(true);
  });

  it('keeps the token only as a check, never as text', () => {
    const resolved = resolveOpsServerOptions({ operator, adminToken: token, host: '0.0.0.0', port: 0, exposePayloads: true });
    expect(resolved).toMatchObject({ host: '0.0.0.0', port: 0, exposePayloads: true });
    expect(resolved.token?.matches(token)).toBe(true);
    expect(JSON.stringify(resolved)).not.toContain(token);
    expect(Object.values(resolved)).not.toContain(token);
  });

  it.each([
    [{ port: -1 }, 'port'],
    [{ port: 65_536 }, 'port'],
    [{ port: 80.5 }, 'port'],
    [{ host: '' }, 'host'],
    [{ host: 'bad host' }, 'host'],
    [{ host: 'http://127.0.0.1' }, 'host'],
    [{ adminToken: '' }, 'adminToken'],
    [{ adminToken: 'fifteen-chars!!' }, 'adminToken'],
    [{ adminToken: 'sixteen chars ok' }, 'adminToken'],
    [{ exposePayloads: 'yes' }, 'exposePayloads'],
    [{ unknownOption: 1 }, '(root)'],
  ] as const)('refuses %j naming %s, and never quotes the token', (settings, option) => {
    const error = refusal({ operator, ...(settings as object) } as OpsServerOptions);
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.message).toMatch(new RegExp(`^http option ${option.replace(/[()]/g, '\\$&')}`));
    if ('adminToken' in settings && settings.adminToken !== '') expect(error.message).not.toContain(settings.adminToken);
  });

  it('needs an operator with the four core methods, and a relay and metrics of the right shape', () => {
    expect(refusal({ operator: { stats: operator.stats } as unknown as OutboxOperator }).message).toMatch(
      /operator: needs a store with listDead, retryDead, purgeDead/,
    );
    expect(refusal({} as OpsServerOptions).options).toEqual(['operator']);
    expect(refusal({ operator, relay: {} as never }).options).toEqual(['relay']);
    expect(refusal({ operator, metrics: { metrics: () => Promise.resolve('') } as never }).options).toEqual(['metrics']);
  });

  it('checks the listening settings alone, as the CLI does with its flags', () => {
    expect(checkOpsServerSettings({ port: 0 })).toEqual({ host: '127.0.0.1', port: 0, exposePayloads: false });
    expect(() => checkOpsServerSettings({ host: '::1', port: 9000, adminToken: token })).not.toThrow();
    expect(() => checkOpsServerSettings({ adminToken: 'short' })).toThrow(
      /^http option adminToken: the admin token must be at least 16 characters long \(got 5\)$/,
    );
  });
});
