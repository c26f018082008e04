import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpsServer, DASHBOARD_CONTENT_SECURITY_POLICY, type OpsServer } from '../../src/ops/http/index.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';

const token = randomBytes(24).toString('hex');

interface RawAnswer {
  readonly status: number;
  /** Header names lower-cased; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Whether the server closed the connection after answering. */
  readonly closed: boolean;
}

/** Every answer of this file, to check the headers every response must carry. */
const answers: RawAnswer[] = [];

/**
 * Sends bytes exactly as given (no client normalizes the path) and reads the first answer, then whether the
 * server closes the connection (it does for `Connection: close`; a kept-alive one is closed by the test).
 */
async function raw(port: number, parts: readonly (string | Buffer)[], bodiless = false): Promise<RawAnswer> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined); // a reset after a refused body is the point of some tests
  let received = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
  });
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.once('close', () => {
    closed = true;
  });
  for (const part of parts) socket.write(part);
  const complete = () => {
    const text = received.toString('latin1');
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return false;
    const length = bodiless ? 0 : Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
    return received.length >= end + 4 + length;
  };
  const deadline = Date.now() + 10_000;
  while (!complete() && !closed) {
    if (Date.now() > deadline) throw new Error(`no answer within 10 s; got ${JSON.stringify(received.toString('latin1').slice(0, 200))}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const text = received.toString('utf8');
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  // A response with Connection: close is followed by the server's FIN; wait for it (bounded by the server's own close).
  if (headers.connection === 'close') await ended;
  socket.destroy();
  const answer = { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), closed };
  answers.push(answer);
  return answer;
}

const get = (port: number, target: string, extra = '', method = 'GET') =>
  raw(port, [`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}\r\n`], method === 'HEAD');
const post = (port: number, target: string, body: string, extra = `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n`) =>
  raw(port, [`POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`]);
const codeOf = (answer: RawAnswer) => (JSON.parse(answer.body) as { error: { code: string } }).error.code;

describe('outboxer/http security: fails closed', () => {
  let fixture: PostgresFixture;
  const servers: OpsServer[] = [];
  const ports = { guarded: 0, noToken: 0, wide: 0, wideNoToken: 0 };

  const start = async (options: { host?: string; adminToken?: string }) => {
    const registry = new Registry();
    const server = createOpsServer({ operator: fixture.store, metrics: registry, port: 0, ...options });
    servers.push(server);
    return (await server.listen()).port;
  };

  beforeAll(async () => {
    fixture = await createPostgresFixture();
    ports.guarded = await start({ adminToken: token });
    ports.noToken = await start({});
    ports.wide = await start({ host: '0.0.0.0', adminToken: token });
    ports.wideNoToken = await start({ host: '0.0.0.0' });
  });

  afterAll(async () => {
    for (const server of servers) await server.close();
    await fixture?.cleanup();
  });

  it('without a configured token every change is refused with 403 OUTBOXER_ADMIN_DISABLED, whatever is sent', async () => {
    for (const path of ['/api/dead/retry', '/api/dead/purge', '/api/topics/pause', '/api/topics/resume']) {
      for (const auth of ['', `Authorization: Bearer ${token}\r\n`, 'Authorization: Bearer anything-at-all-here\r\n']) {
        const answer = await post(ports.noToken, path, '{"all":true}', `${auth}Content-Type: application/json\r\n`);
        expect(answer.status, `${path} ${auth}`).toBe(403);
        expect(codeOf(answer)).toBe('OUTBOXER_ADMIN_DISABLED');
      }
    }
    expect(JSON.parse((await get(ports.noToken, '/api/info')).body)).toMatchObject({ mutations: 'disabled', readRequiresToken: false });
  });

  it('a missing or wrong token is 401 OUTBOXER_UNAUTHORIZED with a Bearer challenge; the right one works, in any case of the scheme', async () => {
    const wrong = [
      '',
      'Authorization: Bearer wrong-token-of-some-length\r\n',
      `Authorization: Bearer ${token.slice(0, -1)}x\r\n`, // same length, last character differs
      `Authorization: Bearer ${token}${token}\r\n`,
      `Authorization: Basic ${Buffer.from(`admin:${token}`).toString('base64')}\r\n`,
      `Authorization: ${token}\r\n`,
      `Authorization: Bearer ${token} extra\r\n`,
    ];
    for (const auth of wrong) {
      const answer = await post(ports.guarded, '/api/dead/retry', '{"all":true}', `${auth}Content-Type: application/json\r\n`);
      expect(answer.status, auth).toBe(401);
      expect(codeOf(answer)).toBe('OUTBOXER_UNAUTHORIZED');
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer realm="outboxer"/);
      expect(answer.body).not.toContain(token);
    }
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const answer = await post(ports.guarded, '/api/dead/retry', '{"all":true}', `Authorization: ${scheme} ${token}\r\nContent-Type: application/json\r\n`);
      expect(answer.status, scheme).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ retried: 0 });
    }
  });

  it('on loopback reads are open, but a token sent must be right', async () => {
    expect((await get(ports.guarded, '/api/stats')).status).toBe(200);
    expect((await get(ports.guarded, '/metrics')).status).toBe(200);
    expect((await get(ports.guarded, '/api/stats', `Authorization: Bearer ${token}\r\n`)).status).toBe(200);
    const wrong = await get(ports.guarded, '/api/stats', 'Authorization: Bearer not-the-right-token\r\n');
    expect([wrong.status, codeOf(wrong)]).toEqual([401, 'OUTBOXER_UNAUTHORIZED']);
  });

  it('on loopback, a read without the token must name a loopback host: a page rebound to 127.0.0.1 (DNS rebinding) is refused', async () => {
    const port = ports.guarded;
    const rebound = await raw(port, [`GET /api/dead HTTP/1.1\r\nHost: attacker.example:${port}\r\n\r\n`]);
    expect([rebound.status, codeOf(rebound)]).toEqual([403, 'OUTBOXER_HOST_REFUSED']);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'app.localhost', '127.0.0.2']) {
      expect((await raw(port, [`GET /api/dead HTTP/1.1\r\nHost: ${host}\r\n\r\n`])).status, host).toBe(200);
    }
    expect((await raw(port, [`GET /api/dead HTTP/1.1\r\nHost: attacker.example\r\nAuthorization: Bearer ${token}\r\n\r\n`])).status).toBe(200);
    expect((await raw(port, ['GET /health/ready HTTP/1.1\r\nHost: attacker.example\r\n\r\n'])).status).toBe(200);
  });

  it('bound beyond loopback (0.0.0.0), reads need the token too; health and the dashboard files never do', async () => {
    for (const path of ['/api/stats', '/api/info', '/api/dead', '/api/topics', '/api/relays', '/api/topics/paused', '/metrics']) {
      const answer = await get(ports.wide, path);
      expect([answer.status, codeOf(answer)], path).toEqual([401, 'OUTBOXER_UNAUTHORIZED']);
      expect((await get(ports.wide, path, `Authorization: Bearer ${token}\r\n`)).status, path).toBe(200);
    }
    expect(JSON.parse((await get(ports.wide, '/api/info', `Authorization: Bearer ${token}\r\n`)).body)).toMatchObject({
      readRequiresToken: true,
      mutations: 'enabled',
    });
    for (const path of ['/health/live', '/health/ready', '/', '/dashboard.js', '/dashboard.css']) {
      expect((await get(ports.wide, path)).status, path).toBe(200);
    }
    const closedReads = await get(ports.wideNoToken, '/api/stats', `Authorization: Bearer ${token}\r\n`);
    expect([closedReads.status, codeOf(closedReads)]).toEqual([403, 'OUTBOXER_ADMIN_DISABLED']);
    expect((await get(ports.wideNoToken, '/health/live')).status).toBe(200);
  });

  it('bodies: over 16 KiB is 413 (declared, chunked or streamed), and the connection is closed; 16 KiB exactly is read', async () => {
    const head = `POST /api/dead/retry HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n`;
    const declared = await raw(ports.guarded, [`${head}Content-Length: 1000000\r\n\r\n{"all":true`]);
    expect([declared.status, codeOf(declared), declared.closed]).toEqual([413, 'OUTBOXER_BODY_TOO_LARGE', true]);
    const chunk = `400\r\n${' '.repeat(1024)}\r\n`;
    const chunked = await raw(ports.guarded, [
      `${head}Transfer-Encoding: chunked\r\n\r\n`,
      '5\r\n{"all\r\n',
      ...Array.from({ length: 17 }, () => chunk),
      '0\r\n\r\n',
    ]);
    expect([chunked.status, codeOf(chunked), chunked.closed]).toEqual([413, 'OUTBOXER_BODY_TOO_LARGE', true]);
    const padded = (size: number) => `{"all":true${' '.repeat(size - 12)}}`;
    expect((await post(ports.guarded, '/api/dead/retry', padded(16 * 1024))).status).toBe(200);
    expect((await post(ports.guarded, '/api/dead/retry', padded(16 * 1024 + 1))).status).toBe(413);
  });

  it('a Content-Length that understates the body: the server reads only the declared bytes, and the rest, no valid request, ends the connection', async () => {
    const body = `{"all":true,"pad":"${'x'.repeat(20_000)}"}`;
    const answer = await raw(ports.guarded, [
      `POST /api/dead/retry HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n${body}`,
    ]);
    expect(answer.status).toBe(400);
    expect(answer.closed).toBe(true);
    expect((await get(ports.guarded, '/health/live')).status).toBe(200);
  });

  it('bodies must be JSON objects of the documented shape: 415 for another type, 400 for bad JSON, bad ids and unknown fields', async () => {
    const auth = `Authorization: Bearer ${token}\r\n`;
    const cases: [string, string, string, number, string][] = [
      ['/api/dead/retry', '{"all":true}', `${auth}Content-Type: text/plain\r\n`, 415, 'OUTBOXER_UNSUPPORTED_MEDIA_TYPE'],
      ['/api/dead/retry', '{"all":true}', auth, 415, 'OUTBOXER_UNSUPPORTED_MEDIA_TYPE'],
      ['/api/dead/retry', 'all=true', `${auth}Content-Type: application/x-www-form-urlencoded\r\n`, 415, 'OUTBOXER_UNSUPPORTED_MEDIA_TYPE'],
      ['/api/dead/retry', '{"all":tru', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_JSON'],
      ['/api/dead/retry', '', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_JSON'],
      ['/api/dead/retry', '{"ids":["not-a-uuid"]}', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_ID'],
      ['/api/dead/purge', `{"ids":["${randomUUID()}", 42]}`, `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_ID'],
      ['/api/dead/purge', `{"ids":["${randomUUID()}' OR 1=1 --"]}`, `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_ID'],
      ['/api/dead/retry', '{"ids":[]}', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_REQUEST'],
      [
        '/api/dead/retry',
        JSON.stringify({ ids: Array.from({ length: 401 }, () => randomUUID()) }),
        `${auth}Content-Type: application/json\r\n`,
        400,
        'OUTBOXER_INVALID_REQUEST',
      ],
      ['/api/dead/retry', `{"ids":["${randomUUID()}"],"all":true}`, `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_REQUEST'],
      ['/api/dead/retry', '{"all":false}', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_REQUEST'],
      ['/api/dead/retry', '{"all":true,"__proto__":{}}', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_REQUEST'],
      ['/api/dead/retry', '[]', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_REQUEST'],
      ['/api/topics/pause', '{"topic":"a\\u0000b"}', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_REQUEST'],
      ['/api/topics/pause', JSON.stringify({ topic: 'x'.repeat(256) }), `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_REQUEST'],
      [
        '/api/topics/pause',
        JSON.stringify({ topic: 'a.b', reason: 'r'.repeat(501) }),
        `${auth}Content-Type: application/json\r\n`,
        400,
        'OUTBOXER_INVALID_REQUEST',
      ],
      ['/api/topics/resume', '{"topic":""}', `${auth}Content-Type: application/json\r\n`, 400, 'OUTBOXER_INVALID_REQUEST'],
    ];
    for (const [path, body, headers, status, code] of cases) {
      const answer = await post(ports.guarded, path, body, headers);
      expect([answer.status, codeOf(answer)], `${path} ${body.slice(0, 60)}`).toEqual([status, code]);
    }
    const nonUtf8 = Buffer.concat([Buffer.from('{"all":true,"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const answer = await raw(ports.guarded, [
      `POST /api/dead/retry HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${nonUtf8.length}\r\n\r\n`,
      nonUtf8,
    ]);
    expect([answer.status, codeOf(answer)]).toEqual([400, 'OUTBOXER_INVALID_JSON']);
  });

  it('a method a path does not take is 405 with Allow; CORS preflights get no CORS header', async () => {
    const cases: [string, string, string][] = [
      ['POST', '/api/stats', 'GET, HEAD'],
      ['DELETE', '/api/dead', 'GET, HEAD'],
      ['GET', '/api/dead/retry', 'POST'],
      ['PUT', '/api/topics/pause', 'POST'],
      ['PATCH', '/metrics', 'GET, HEAD'],
      ['OPTIONS', '/api/dead/purge', 'POST'],
      ['TRACE', '/health/live', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const answer = await get(ports.guarded, path, `Authorization: Bearer ${token}\r\n`, method);
      expect([answer.status, answer.headers.allow, codeOf(answer)], `${method} ${path}`).toEqual([405, allow, 'OUTBOXER_METHOD_NOT_ALLOWED']);
    }
    const preflight = await get(
      ports.guarded,
      '/api/dead/retry',
      'Origin: https://attacker.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, content-type\r\n',
      'OPTIONS',
    );
    expect(preflight.status).toBe(405);
    expect(Object.keys(preflight.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    const head = await get(ports.guarded, '/health/live', '', 'HEAD');
    expect([head.status, head.headers['content-length'], head.body]).toEqual([200, '18', '']);
  });

  it('path tricks are refused or not found, deterministically, and never reach another endpoint', async () => {
    const cases: [string, number, string][] = [
      ['/api/../metrics', 400, 'OUTBOXER_INVALID_PATH'],
      ['/api/./stats', 400, 'OUTBOXER_INVALID_PATH'],
      ['//api/stats', 400, 'OUTBOXER_INVALID_PATH'],
      ['/api//stats', 400, 'OUTBOXER_INVALID_PATH'],
      ['/api%2Fstats', 400, 'OUTBOXER_INVALID_PATH'],
      ['/api/%2e%2e/metrics', 400, 'OUTBOXER_INVALID_PATH'],
      ['/api/%73tats', 400, 'OUTBOXER_INVALID_PATH'],
      ['/api\\stats', 400, 'OUTBOXER_INVALID_PATH'],
      ['/api/stats;x=1', 400, 'OUTBOXER_INVALID_PATH'],
      [`/${'a'.repeat(3000)}`, 400, 'OUTBOXER_BAD_REQUEST_TARGET'],
      ['/api/stats#top', 400, 'OUTBOXER_BAD_REQUEST_TARGET'],
      ['*', 400, 'OUTBOXER_BAD_REQUEST_TARGET'],
      ['/api/stats/', 404, 'OUTBOXER_NOT_FOUND'],
      ['/API/stats', 404, 'OUTBOXER_NOT_FOUND'],
      ['/api', 404, 'OUTBOXER_NOT_FOUND'],
      ['/index.html', 404, 'OUTBOXER_NOT_FOUND'],
      ['/api/stats?limit=5', 400, 'OUTBOXER_INVALID_QUERY'],
      ['/health/live?verbose', 400, 'OUTBOXER_INVALID_QUERY'],
      ['/api/dead?limit=0', 400, 'OUTBOXER_INVALID_QUERY'],
      ['/api/dead?limit=1001', 400, 'OUTBOXER_INVALID_QUERY'],
      ['/api/dead?limit=1e3', 400, 'OUTBOXER_INVALID_QUERY'],
      ['/api/dead?limit=-1', 400, 'OUTBOXER_INVALID_QUERY'],
      ['/api/dead?limit=5&limit=6', 400, 'OUTBOXER_INVALID_QUERY'],
      ['/api/topics?limit=10&__proto__=1', 400, 'OUTBOXER_INVALID_QUERY'],
    ];
    for (const [target, status, code] of cases) {
      const answer = await get(ports.guarded, target);
      expect([answer.status, codeOf(answer)], target).toEqual([status, code]);
    }
    // Not even a target Node's parser accepts: it answers 400 itself and closes the connection.
    const relative = await get(ports.guarded, 'api/stats');
    expect([relative.status, relative.closed]).toEqual([400, true]);
    expect((await get(ports.guarded, '/api/dead?limit=1000')).status).toBe(200);
    expect((await get(ports.guarded, '/api/dead?limit=1')).status).toBe(200);
    // The absolute form is read as its path: its host does not pick another server or skip the checks.
    const absolute = await get(ports.guarded, 'http://attacker.example/api/info');
    expect([absolute.status, JSON.parse(absolute.body).version]).toEqual([200, expect.any(String)]);
    expect((await get(ports.wide, 'http://127.0.0.1/api/info')).status).toBe(401);
  });

  it('every answer carries the security headers, and none sets a cookie or allows another origin', async () => {
    const page = await get(ports.guarded, '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CONTENT_SECURITY_POLICY);
    expect(answers.length).toBeGreaterThan(100);
    for (const answer of answers.filter((a) => a.headers['content-type'] !== undefined)) {
      expect(answer.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
      });
      expect(answer.headers['content-security-policy']).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
    }
    for (const answer of answers) {
      expect(answer.headers['set-cookie']).toBeUndefined();
      expect(Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
  });
});
