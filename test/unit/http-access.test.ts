import { describe, expect, it } from 'vitest';
import { type AccessPolicy, authorize, isLoopbackAddress, isLoopbackHostHeader } from '../../src/ops/http/access-control.js';
import { adminTokenCheck, adminTokenProblem, bearerToken } from '../../src/ops/http/admin-token.js';
import { OpsHttpError } from '../../src/ops/http/ops-http-error.js';

const token = 'a-token-of-32-characters-exactly';
const check = adminTokenCheck(token);

function outcome(action: () => void): string {
  try {
    action();
    return 'allowed';
  } catch (error) {
    if (error instanceof OpsHttpError) return `${error.status} ${error.code}`;
    throw error;
  }
}

describe('admin token', () => {
  it('matches only the configured token, whatever the length of the one presented', () => {
    expect(check.matches(token)).toBe(true);
    for (const presented of ['', 'a', token.slice(0, -1), `${token}x`, token.toUpperCase(), `${token.slice(0, -1)}X`, token.repeat(100)]) {
      expect(check.matches(presented), presented.slice(0, 40)).toBe(false);
    }
  });

  it('keeps no copy of the token: the check holds only a digest', () => {
    expect(JSON.stringify(check)).not.toContain(token);
    expect(Object.keys(check)).toEqual(['matches']);
    expect(Object.isFrozen(check)).toBe(true);
  });

  it('needs 16 to 1024 visible ASCII characters, and never quotes the token in its refusal', () => {
    expect(adminTokenProblem('x'.repeat(16))).toBeUndefined();
    expect(adminTokenProblem('!~'.repeat(8))).toBeUndefined();
    for (const bad of ['short-secret-15', 'x'.repeat(1025), 'has a space in it!!', 'tab\tseparated-token', 'ünïcödé-characters-here']) {
      const problem = adminTokenProblem(bad);
      expect(problem, bad.slice(0, 20)).toMatch(/admin token must/);
      expect(problem).not.toContain(bad);
    }
  });

  it.each([
    [`Bearer ${token}`, token],
    [`bearer ${token}`, token],
    [`BEARER  ${token} `, token],
    [`Basic ${token}`, undefined],
    [token, undefined],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    [`Bearer ${token} ${token}`, undefined],
    [`Bearer\t${token}`, undefined],
    [undefined, undefined],
  ])('Authorization %j gives the token %j', (header, expected) => {
    expect(bearerToken(header)).toBe(expected);
  });
});

describe('authorize: fails closed', () => {
  const loopback: AccessPolicy = { token: check, readRequiresToken: false };
  const wide: AccessPolicy = { token: check, readRequiresToken: true };
  const loopbackNoToken: AccessPolicy = { token: undefined, readRequiresToken: false };
  const wideNoToken: AccessPolicy = { token: undefined, readRequiresToken: true };
  const right = `Bearer ${token}`;
  const wrong = 'Bearer not-the-configured-token';
  const host = '127.0.0.1:9465';

  it.each([
    // access, policy, Authorization, Host, outcome
    ['public', wideNoToken, undefined, 'attacker.example', 'allowed'],
    ['public', wide, wrong, host, 'allowed'],
    ['change', loopbackNoToken, right, host, '403 OUTBOXER_ADMIN_DISABLED'],
    ['change', wideNoToken, undefined, host, '403 OUTBOXER_ADMIN_DISABLED'],
    ['change', loopback, undefined, host, '401 OUTBOXER_UNAUTHORIZED'],
    ['change', loopback, wrong, host, '401 OUTBOXER_UNAUTHORIZED'],
    ['change', loopback, right, host, 'allowed'],
    ['change', loopback, right, 'attacker.example', 'allowed'],
    ['change', wide, right, host, 'allowed'],
    ['read', loopback, undefined, host, 'allowed'],
    ['read', loopbackNoToken, undefined, 'localhost', 'allowed'],
    ['read', loopback, wrong, host, '401 OUTBOXER_UNAUTHORIZED'],
    ['read', loopbackNoToken, right, host, '403 OUTBOXER_ADMIN_DISABLED'],
    ['read', loopback, undefined, 'attacker.example:9465', '403 OUTBOXER_HOST_REFUSED'],
    ['read', loopback, right, 'attacker.example:9465', 'allowed'],
    ['read', wide, undefined, host, '401 OUTBOXER_UNAUTHORIZED'],
    ['read', wide, wrong, host, '401 OUTBOXER_UNAUTHORIZED'],
    ['read', wide, right, 'anything', 'allowed'],
    ['read', wideNoToken, right, host, '403 OUTBOXER_ADMIN_DISABLED'],
  ] as const)('%s on %o with %j, Host %j: %s', (access, policy, authorization, hostHeader, expected) => {
    expect(outcome(() => authorize(access, { authorization, host: hostHeader }, policy))).toBe(expected);
  });

  it('challenges with Bearer on 401, and says invalid_token when one was sent', () => {
    const challenge = (authorization: string | undefined) => {
      try {
        authorize('change', { authorization, host }, loopback);
      } catch (error) {
        return (error as OpsHttpError).headers['WWW-Authenticate'];
      }
      return undefined;
    };
    expect(challenge(undefined)).toBe('Bearer realm="outboxer"');
    expect(challenge(wrong)).toBe('Bearer realm="outboxer", error="invalid_token"');
  });
});

describe('loopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.0.0.2', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.1', false],
    ['192.168.1.10', false],
    ['::ffff:10.0.0.1', false],
    ['128.0.0.1', false],
    ['fe80::1', false],
  ])('bound address %s is loopback: %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });

  it.each([
    ['localhost', true],
    ['LOCALHOST:9465', true],
    ['localhost.', true],
    ['app.localhost:80', true],
    ['127.0.0.1:9465', true],
    ['127.1.2.3', true],
    ['[::1]:9465', true],
    ['[::1]', true],
    [undefined, true],
    ['attacker.example', false],
    ['localhost.attacker.example', false],
    ['127.0.0.1.nip.io', false],
    ['[::ffff:10.0.0.1]:80', false],
    ['10.0.0.1:9465', false],
    ['', false],
    ['localhost:9465:1', false],
    ['[::1', false],
  ])('Host %j is loopback: %s', (host, expected) => {
    expect(isLoopbackHostHeader(host)).toBe(expected);
  });
});
