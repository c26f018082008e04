import { randomUUID } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, readJsonBody } from '../../src/ops/http/json-body.js';
import { OpsHttpError } from '../../src/ops/http/ops-http-error.js';
import { DEFAULT_PAUSE_REASON, deadSelection, MAX_IDS_PER_REQUEST, pauseRequest, resumeRequest } from '../../src/ops/http/request-bodies.js';

/** Runs `action` and gives back what it returned, or the status and code it refused with. */
function result<T>(action: () => T): T | string {
  try {
    return action();
  } catch (error) {
    if (error instanceof OpsHttpError) return `${error.status} ${error.code}`;
    throw error;
  }
}

describe('readJsonBody, on a loopback server', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((incoming, outgoing) => {
      readJsonBody(incoming).then(
        (body) => outgoing.end(JSON.stringify({ body })),
        (error: unknown) => outgoing.end(JSON.stringify({ refused: error instanceof OpsHttpError ? `${error.status} ${error.code}` : String(error) })),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Sends `chunks` as the body (chunked unless a Content-Length is given) and returns the server's verdict. */
  function send(chunks: readonly (string | Buffer)[], headers: Record<string, string> = { 'Content-Type': 'application/json' }): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers, agent: false }, (answer) => {
        let text = '';
        answer
          .setEncoding('utf8')
          .on('data', (chunk: string) => (text += chunk))
          .on('end', () => resolve(JSON.parse(text)));
      });
      outgoing.on('error', reject);
      for (const chunk of chunks) outgoing.write(chunk);
      outgoing.end();
    });
  }

  it('parses a JSON body, with or without charset=utf-8', async () => {
    expect(await send(['{"all":', 'true}'])).toEqual({ body: { all: true } });
    expect(await send(['["a"]'], { 'Content-Type': 'application/json; charset=UTF-8' })).toEqual({ body: ['a'] });
  });

  it.each([
    [{}, '415 OUTBOXER_UNSUPPORTED_MEDIA_TYPE'],
    [{ 'Content-Type': 'text/plain' }, '415 OUTBOXER_UNSUPPORTED_MEDIA_TYPE'],
    [{ 'Content-Type': 'application/json; charset=latin1' }, '415 OUTBOXER_UNSUPPORTED_MEDIA_TYPE'],
    [{ 'Content-Type': 'application/jsonp' }, '415 OUTBOXER_UNSUPPORTED_MEDIA_TYPE'],
    [{ 'Content-Type': 'multipart/form-data; boundary=x' }, '415 OUTBOXER_UNSUPPORTED_MEDIA_TYPE'],
  ])('refuses Content-Type %j', async (headers, refused) => {
    expect(await send(['{}'], headers)).toEqual({ refused });
  });

  it('counts the bytes as they come: a chunked body one byte over the limit is 413, one at the limit is read', async () => {
    const body = (size: number) => `{"a":"${'x'.repeat(size - 8)}"}`;
    expect(Buffer.byteLength(body(MAX_BODY_BYTES))).toBe(MAX_BODY_BYTES);
    expect(await send([body(MAX_BODY_BYTES)])).toEqual({ body: { a: 'x'.repeat(MAX_BODY_BYTES - 8) } });
    const over = body(MAX_BODY_BYTES + 1);
    expect(await send([over.slice(0, 10_000), over.slice(10_000)])).toEqual({ refused: '413 OUTBOXER_BODY_TOO_LARGE' });
  });

  it('refuses a declared Content-Length over the limit before reading', async () => {
    const declared = { 'Content-Type': 'application/json', 'Content-Length': String(MAX_BODY_BYTES + 1) };
    expect(await send([], declared)).toEqual({ refused: '413 OUTBOXER_BODY_TOO_LARGE' });
  });

  it.each([
    [[], '400 OUTBOXER_INVALID_JSON'],
    [['  \n '], '400 OUTBOXER_INVALID_JSON'],
    [['{"a":'], '400 OUTBOXER_INVALID_JSON'],
    [["{'a':1}"], '400 OUTBOXER_INVALID_JSON'],
    [[Buffer.from([0x7b, 0xff, 0x7d])], '400 OUTBOXER_INVALID_JSON'],
  ])('refuses %j as not JSON', async (chunks, refused) => {
    expect(await send(chunks)).toEqual({ refused });
  });
});

describe('bodies of the changes', () => {
  const id = randomUUID();

  it('a dead selection is ids (lower-cased, duplicates dropped) or all', () => {
    expect(result(() => deadSelection({ all: true }))).toEqual({ ids: 'all', filter: {} });
    expect(result(() => deadSelection({ ids: [id.toUpperCase(), id] }))).toEqual({ ids: [id], filter: {} });
    expect(deadSelection({ ids: Array.from({ length: MAX_IDS_PER_REQUEST }, () => randomUUID()) }).ids).toHaveLength(MAX_IDS_PER_REQUEST);
  });

  it("a dead selection may name one destination: `default` is the ports' null (the messages stored without one)", () => {
    expect(deadSelection({ all: true, destination: 'partner' })).toEqual({ ids: 'all', destination: 'partner', filter: { destination: 'partner' } });
    expect(deadSelection({ ids: [id], destination: 'default' })).toEqual({ ids: [id], destination: 'default', filter: { destination: null } });
    expect(deadSelection({ all: true, destination: 'Partner_2-b' }).filter).toEqual({ destination: 'Partner_2-b' });
  });

  it.each([
    [{ all: true, destination: '' }, /^destination: OUTBOXER_INVALID_DESTINATION: destination "" is invalid: a destination is an ASCII letter/],
    [{ all: true, destination: 'two words' }, /destination "two words" is invalid: .*; `default` names the messages stored without one$/],
    [{ all: true, destination: '-partner' }, /OUTBOXER_INVALID_DESTINATION/],
    [{ all: true, destination: 'p'.repeat(65) }, /at most 64 bytes/],
    [{ all: true, destination: 'pärtner' }, /OUTBOXER_INVALID_DESTINATION/],
    [{ all: true, destination: null }, /^destination must be a string/],
    [{ ids: [id], destination: 7 }, /^destination must be a string/],
  ])('refuses the destination of %j, naming the field', (body, message) => {
    expect(result(() => deadSelection(body))).toBe('400 OUTBOXER_INVALID_REQUEST');
    expect(() => deadSelection(body)).toThrow(message);
  });

  it.each([
    [null, '400 OUTBOXER_INVALID_REQUEST'],
    [[], '400 OUTBOXER_INVALID_REQUEST'],
    ['all', '400 OUTBOXER_INVALID_REQUEST'],
    [{}, '400 OUTBOXER_INVALID_REQUEST'],
    [{ all: false }, '400 OUTBOXER_INVALID_REQUEST'],
    [{ all: 'true' }, '400 OUTBOXER_INVALID_REQUEST'],
    [{ all: true, ids: [id] }, '400 OUTBOXER_INVALID_REQUEST'],
    [{ all: true, extra: 1 }, '400 OUTBOXER_INVALID_REQUEST'],
    [JSON.parse('{"all":true,"__proto__":{"x":1}}'), '400 OUTBOXER_INVALID_REQUEST'],
    [{ ids: [] }, '400 OUTBOXER_INVALID_REQUEST'],
    [{ ids: id }, '400 OUTBOXER_INVALID_REQUEST'],
    [{ ids: Array.from({ length: MAX_IDS_PER_REQUEST + 1 }, () => id) }, '400 OUTBOXER_INVALID_REQUEST'],
    [{ ids: ['nope'] }, '400 OUTBOXER_INVALID_ID'],
    [{ ids: [id, 7] }, '400 OUTBOXER_INVALID_ID'],
    [{ ids: [`${id} `] }, '400 OUTBOXER_INVALID_ID'],
    [{ ids: [`${id}'--`] }, '400 OUTBOXER_INVALID_ID'],
  ])('refuses %j', (body, refused) => {
    expect(result(() => deadSelection(body))).toBe(refused);
  });

  it('a pause names a topic and, if it likes, a reason', () => {
    expect(pauseRequest({ topic: 'orders.created', reason: ' broken consumer ' })).toEqual({ topic: 'orders.created', reason: 'broken consumer' });
    expect(pauseRequest({ topic: 'orders.created' })).toEqual({ topic: 'orders.created', reason: DEFAULT_PAUSE_REASON });
    expect(pauseRequest({ topic: 'orders.created', reason: '   ' })).toEqual({ topic: 'orders.created', reason: DEFAULT_PAUSE_REASON });
    expect(resumeRequest({ topic: 'orders.created' })).toEqual({ topic: 'orders.created' });
  });

  it.each([
    [{}],
    [{ topic: '' }],
    [{ topic: 7 }],
    [{ topic: 'x'.repeat(256) }],
    [{ topic: 'a\u0000b' }],
    [{ topic: 'a\u202eb' }],
    [{ topic: 'a.b', reason: 'line\nbreak' }],
    [{ topic: 'a.b', reason: 'r'.repeat(501) }],
    [{ topic: 'a.b', reason: 5 }],
    [{ topic: 'a.b', other: 1 }],
  ])('refuses the pause %j', (body) => {
    expect(result(() => pauseRequest(body))).toBe('400 OUTBOXER_INVALID_REQUEST');
  });

  it('refuses a resume with a reason or without a topic', () => {
    expect(result(() => resumeRequest({ topic: 'a.b', reason: 'x' }))).toBe('400 OUTBOXER_INVALID_REQUEST');
    expect(result(() => resumeRequest({}))).toBe('400 OUTBOXER_INVALID_REQUEST');
  });
});
