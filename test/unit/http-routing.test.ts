import { describe, expect, it } from 'vitest';
import { OpsHttpError } from '../../src/ops/http/ops-http-error.js';
import { readQuery } from '../../src/ops/http/query-parameters.js';
import { parseRequestTarget } from '../../src/ops/http/request-target.js';
import type { Route } from '../../src/ops/http/route.js';
import { Router } from '../../src/ops/http/router.js';

/** The error `action` throws, as status and code. */
function refusal(action: () => unknown): { status: number; code: string; headers: Readonly<Record<string, string>> } {
  try {
    action();
  } catch (error) {
    if (error instanceof OpsHttpError) return { status: error.status, code: error.code, headers: error.headers };
    throw error;
  }
  throw new Error('accepted');
}

describe('request target: read as sent, never normalized', () => {
  it.each([
    ['/api/stats', '/api/stats', ''],
    ['/api/dead?limit=5', '/api/dead', 'limit=5'],
    ['/', '/', ''],
    ['/api/stats/', '/api/stats/', ''],
    ['/api/stats?', '/api/stats', ''],
    ['http://any.host:80/api/info?x=1', '/api/info', 'x=1'],
    ['HTTP://HOST', '/', ''],
    ['http://host?limit=1', '/', 'limit=1'],
  ])('%s is path %s, query %j', (raw, path, query) => {
    expect(parseRequestTarget(raw)).toEqual({ path, query });
  });

  it.each([
    ['/api/../metrics', 'OUTBOXER_INVALID_PATH'],
    ['/..', 'OUTBOXER_INVALID_PATH'],
    ['/api/.', 'OUTBOXER_INVALID_PATH'],
    ['//api/stats', 'OUTBOXER_INVALID_PATH'],
    ['/api//stats', 'OUTBOXER_INVALID_PATH'],
    ['/api%2fstats', 'OUTBOXER_INVALID_PATH'],
    ['/%2e%2e/metrics', 'OUTBOXER_INVALID_PATH'],
    ['/api\\stats', 'OUTBOXER_INVALID_PATH'],
    ['/api/stats;a', 'OUTBOXER_INVALID_PATH'],
    ['/api/st ats', 'OUTBOXER_INVALID_PATH'],
    ['/api/stäts', 'OUTBOXER_INVALID_PATH'],
    ['http://host//api/stats', 'OUTBOXER_INVALID_PATH'],
    ['/api/stats#x', 'OUTBOXER_BAD_REQUEST_TARGET'],
    ['*', 'OUTBOXER_BAD_REQUEST_TARGET'],
    ['api/stats', 'OUTBOXER_BAD_REQUEST_TARGET'],
    ['ftp://host/api/stats', 'OUTBOXER_BAD_REQUEST_TARGET'],
    [`/${'a'.repeat(2048)}`, 'OUTBOXER_BAD_REQUEST_TARGET'],
  ])('%s is refused with 400 %s', (raw, code) => {
    expect(refusal(() => parseRequestTarget(raw))).toMatchObject({ status: 400, code });
  });
});

describe('Router: exact paths, methods with Allow', () => {
  const handle = async () => ({ status: 200, json: {} });
  const router = new Router([
    { method: 'GET', path: '/api/dead', access: 'read', handle },
    { method: 'POST', path: '/api/dead/retry', access: 'change', handle },
    { method: 'GET', path: '/both', access: 'read', handle },
    { method: 'POST', path: '/both', access: 'change', handle },
  ] satisfies Route[]);

  it('finds a GET route for GET and HEAD, a POST route for POST', () => {
    expect(router.match('/api/dead', 'GET').path).toBe('/api/dead');
    expect(router.match('/api/dead', 'HEAD').method).toBe('GET');
    expect(router.match('/api/dead/retry', 'POST').method).toBe('POST');
    expect(router.match('/both', 'POST').access).toBe('change');
  });

  it.each([['/api/dead/'], ['/API/dead'], ['/api'], ['/api/dead/retry/x'], ['/__proto__'], ['/constructor']])('%s is 404', (path) => {
    expect(refusal(() => router.match(path, 'GET'))).toMatchObject({ status: 404, code: 'OUTBOXER_NOT_FOUND' });
  });

  it.each([
    ['/api/dead', 'POST', 'GET, HEAD'],
    ['/api/dead', 'DELETE', 'GET, HEAD'],
    ['/api/dead', undefined, 'GET, HEAD'],
    ['/api/dead/retry', 'GET', 'POST'],
    ['/api/dead/retry', 'HEAD', 'POST'],
    ['/api/dead/retry', 'OPTIONS', 'POST'],
    ['/both', 'PUT', 'GET, HEAD, POST'],
  ])('%s %s is 405 with Allow: %s', (path, method, allow) => {
    expect(refusal(() => router.match(path, method))).toEqual({ status: 405, code: 'OUTBOXER_METHOD_NOT_ALLOWED', headers: { Allow: allow } });
  });

  it('refuses two routes for one method and path', () => {
    expect(
      () =>
        new Router([
          { method: 'GET', path: '/x', access: 'public', handle },
          { method: 'GET', path: '/x', access: 'read', handle },
        ]),
    ).toThrow('two routes for GET /x');
  });
});

describe('query parameters: declared, once, whole numbers within bounds', () => {
  const limit = { limit: { min: 1, max: 1000, default: 100 } };

  it('fills in the default, and takes a value within bounds', () => {
    expect(readQuery('', limit)).toEqual({ limit: 100 });
    expect(readQuery('limit=1', limit)).toEqual({ limit: 1 });
    expect(readQuery('limit=1000', limit)).toEqual({ limit: 1000 });
    expect(readQuery('limit=007', limit)).toEqual({ limit: 7 });
    expect(readQuery('', {})).toEqual({});
  });

  it.each([
    ['limit=0'],
    ['limit=1001'],
    ['limit=-1'],
    ['limit=1.5'],
    ['limit=1e3'],
    ['limit=abc'],
    ['limit='],
    ['limit=99999999'],
    ['limit=1&limit=2'],
    ['other=1'],
    ['limit=5&x'],
    ['__proto__=1'],
    ['constructor=1'],
    ['LIMIT=5'],
  ])('%s is refused with 400 OUTBOXER_INVALID_QUERY', (query) => {
    expect(refusal(() => readQuery(query, limit))).toMatchObject({ status: 400, code: 'OUTBOXER_INVALID_QUERY' });
  });

  it('refuses any parameter where a route takes none', () => {
    expect(refusal(() => readQuery('verbose', {}))).toMatchObject({ status: 400, code: 'OUTBOXER_INVALID_QUERY' });
  });
});
