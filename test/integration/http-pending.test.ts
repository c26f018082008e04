import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { Relay } from '../../src/core/relay.js';
import { createOpsServer, type OpsServerOptions } from '../../src/ops/http/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { recordingLogger } from '../support/rabbitmq-harness.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { type Json, opsHttpCaller } from '../support/ops-http-caller.js';
import { waitFor } from '../support/wait-for.js';

const token = randomBytes(24).toString('hex');
const UNKNOWN = '00000000-0000-7000-8000-000000000000';

const caller = opsHttpCaller(token);
/** Status and body only: the assertions below compare the answer whole. */
const call = async (...args: Parameters<typeof caller>): Promise<{ status: number; body: Json }> => {
  const { status, body } = await caller(...args);
  return { status, body };
};

describe('outboxer/http: pending messages on a PostgreSQL store', () => {
  const closeLater: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closeLater.splice(0).reverse()) await close();
  });

  /** A fresh schema (dropped after the test) with plain-SQL rows, and a server over its store. */
  async function setup(options: Partial<OpsServerOptions> = {}) {
    const fixture = await createPostgresFixture();
    closeLater.push(() => fixture.cleanup());
    const logger = recordingLogger();
    const server = createOpsServer({ operator: fixture.store, port: 0, adminToken: token, logger, ...options });
    const base = (await server.listen()).url;
    closeLater.push(() => server.close());
    const table = `"${fixture.schema}".outbox`;
    const insert = async (topic: string, key: string | null, payload = '{"n": 1}', headers = '{}'): Promise<string> => {
      const result = await fixture.pool.query(
        `INSERT INTO ${table} (topic, key, type, payload, headers) VALUES ($1, $2, 'test.event', $3, $4) RETURNING id::text AS id`,
        [topic, key, payload, headers],
      );
      return (result.rows[0] as { id: string }).id;
    };
    const park = (id: string) => fixture.pool.query(`UPDATE ${table} SET state = 'dead', dead_at = now(), last_error = 'x' WHERE id = $1`, [id]);
    const audits = () => logger.lines.map((line) => JSON.parse(line) as Json).filter((line) => line.audit === true);
    return { fixture, logger, base, table, insert, park, audits };
  }

  it('GET /api/pending lists pending messages in store order, filtered by topic, key and age, never with a body', async () => {
    const { fixture, base, table, insert, park } = await setup();
    const a1 = await insert('a', 'k1');
    const b1 = await insert('b', 'k1');
    const odd = await insert('orders:eu/west-1.created', null);
    await park(await insert('a', 'k1'));
    await fixture.pool.query(`UPDATE ${table} SET created_at = now() - interval '10 minutes' WHERE id = $1`, [a1]);
    const a2 = await insert('a', 'k2', '{"secret": "do-not-show"}');
    const list = async (query = '') => ((await call(base, `/api/pending${query}`)).body.pending as Json[]).map((m) => m.id);

    const { status, body } = await call(base, '/api/pending');
    expect(status).toBe(200);
    const pending = body.pending as Json[];
    expect(pending.map((m) => m.id)).toEqual([a1, b1, odd, a2]);
    expect(Object.keys(pending[0] ?? {}).sort()).toEqual([
      'ageSeconds',
      'attempts',
      'createdAt',
      'destination',
      'dueAt',
      'id',
      'key',
      'lastError',
      'seq',
      'topic',
      'type',
    ]);
    expect(pending[0]).toMatchObject({ topic: 'a', destination: null, key: 'k1', type: 'test.event', attempts: 0, lastError: null, dueAt: null });
    expect(Number(pending[0]?.ageSeconds)).toBeGreaterThanOrEqual(600);
    expect(JSON.stringify(body)).not.toContain('do-not-show');

    expect(await list('?topic=a')).toEqual([a1, a2]);
    expect(await list('?key=k1')).toEqual([a1, b1]);
    expect(await list('?topic=a&key=k2')).toEqual([a2]);
    expect(await list('?olderThanSeconds=300')).toEqual([a1]);
    expect(await list(`?topic=${encodeURIComponent('orders:eu/west-1.created')}`)).toEqual([odd]);
    expect(await list('?limit=2')).toEqual([a1, b1]);

    for (const [query, code, words] of [
      ['?topic=', 'OUTBOXER_INVALID_QUERY', /topic must be 1 to 255 bytes/],
      ['?topic=a%1Bb', 'OUTBOXER_INVALID_QUERY', /^OUTBOXER_INVALID_TOPIC: /],
      ['?limit=0', 'OUTBOXER_INVALID_QUERY', /limit must be a whole number from 1 to 1000/],
      ['?olderThan=5', 'OUTBOXER_INVALID_QUERY', /unknown query parameter "olderThan"; this endpoint takes limit, olderThanSeconds, topic, key, destination/],
      ['?key=k1&key=k2', 'OUTBOXER_INVALID_QUERY', /given more than once/],
    ] as const) {
      const refused = await call(base, `/api/pending${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error).toMatchObject({ code, message: expect.stringMatching(words) });
    }
  });

  it("GET /api/pending?destination= lists one destination's messages (default: those stored without one); each row and detail names its own", async () => {
    const { fixture, base } = await setup();
    const db = fromPgPool(fixture.pool);
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const [own, partner, archive] = await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(tx, [
        { topic: 'a', type: 'test.event', key: 'k1', payload: { n: 1 } },
        { topic: 'a', type: 'test.event', key: 'k1', payload: { n: 1 }, destination: 'partner' },
        { topic: 'b', type: 'test.event', key: 'k2', payload: { n: 2 }, destination: 'archive' },
      ]),
    );
    const list = async (query = '') => ((await call(base, `/api/pending${query}`)).body.pending as Json[]).map((m) => [m.id, m.destination]);
    expect(await list()).toEqual([
      [own, null],
      [partner, 'partner'],
      [archive, 'archive'],
    ]);
    expect(await list('?destination=partner')).toEqual([[partner, 'partner']]);
    expect(await list('?destination=default')).toEqual([[own, null]]);
    expect(await list('?destination=archive&topic=a')).toEqual([]);
    expect(await list('?destination=partner&key=k1&limit=1')).toEqual([[partner, 'partner']]);
    expect((await call(base, `/api/pending/message?id=${archive}`)).body.message).toMatchObject({ id: archive, topic: 'b', destination: 'archive' });
    for (const [query, words] of [
      ['?destination=two%20words', /^OUTBOXER_INVALID_DESTINATION: query parameter destination: destination "two words" is invalid/],
      ['?destination=', /destination must be 1 to 64 bytes/],
      [`?destination=${'p'.repeat(65)}`, /destination must be 1 to 64 bytes/],
    ] as const) {
      const refused = await call(base, `/api/pending${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'OUTBOXER_INVALID_QUERY', message: expect.stringMatching(words) });
    }
  });

  it('GET /api/pending/message shows header names and body size; the values and the body only with exposePayloads, each such read audited', async () => {
    const hidden = await setup();
    const text = '{"b":1,  "secret":"do-not-show"}';
    const id = await hidden.insert('orders', 'k', text, '{"tenant": "acme-secret"}');
    const answer = await call(hidden.base, `/api/pending/message?id=${id.toUpperCase()}`);
    expect(answer.status).toBe(200);
    expect(answer.body.message).toMatchObject({
      id,
      topic: 'orders',
      key: 'k',
      contentType: 'application/json',
      headerNames: ['tenant'],
      bodyBytes: Buffer.byteLength(text),
      payload: 'hidden',
    });
    expect(JSON.stringify(answer.body)).not.toMatch(/do-not-show|acme-secret/);
    expect(hidden.audits()).toEqual([]);

    const shown = await setup({ exposePayloads: true });
    const same = await shown.insert('orders', 'k', text, '{"tenant": "acme-secret"}');
    const inserted = await shown.fixture.pool.query(`INSERT INTO ${shown.table} (topic, type, payload_bytes, content_type)
      VALUES ('bin', 'test.event', '\\x0a03666f6f00ff'::bytea, 'application/x-protobuf') RETURNING id::text AS id`);
    const binaryId = (inserted.rows[0] as { id: string }).id;
    expect((await call(shown.base, '/api/info')).body.payloads).toBe('shown');
    expect((await call(shown.base, `/api/pending/message?id=${same}`)).body.message).toMatchObject({
      payload: 'shown',
      headers: { tenant: 'acme-secret' },
      body: { text },
    });
    const binary = await call(shown.base, `/api/pending/message?id=${binaryId}`);
    expect(binary.body.message).toMatchObject({
      contentType: 'application/x-protobuf',
      bodyBytes: 7,
      body: { base64: Buffer.from([0x0a, 0x03, 0x66, 0x6f, 0x6f, 0x00, 0xff]).toString('base64') },
    });
    expect(shown.audits()).toContainEqual(expect.objectContaining({ action: 'pending.show', id: same, changed: 0, remoteAddress: '127.0.0.1' }));
    expect(shown.logger.lines.join('\n')).not.toMatch(/do-not-show|acme-secret/);

    await hidden.park(id);
    for (const [query, status, code] of [
      ['', 400, 'OUTBOXER_INVALID_QUERY'],
      ['?id=not-a-uuid', 400, 'OUTBOXER_INVALID_ID'],
      [`?id=${UNKNOWN}`, 404, 'OUTBOXER_NOT_FOUND'],
      [`?id=${id}`, 404, 'OUTBOXER_NOT_FOUND'],
    ] as const) {
      const refused = await call(hidden.base, `/api/pending/message${query}`);
      expect([refused.status, (refused.body.error as Json).code], query).toEqual([status, code]);
    }
  });

  it('POST /api/pending/delete needs the admin token, deletes only pending messages, and writes an audit line', async () => {
    const { fixture, base, table, insert, park, audits, logger } = await setup();
    const [a, b, kept] = [await insert('t', 'k'), await insert('t', null), await insert('t', 'k')];
    const dead = await insert('t', null);
    await park(dead);
    const ids = [a, b.toUpperCase(), dead, UNKNOWN];

    expect((await call(base, '/api/pending/delete', { method: 'POST', body: { ids }, auth: null })).status).toBe(401);
    const noToken = await setup({ adminToken: undefined });
    expect((await call(noToken.base, '/api/pending/delete', { method: 'POST', body: { ids } })).body.error).toMatchObject({ code: 'OUTBOXER_ADMIN_DISABLED' });
    expect((await call(base, '/api/pending/delete', { method: 'POST', body: { all: true } })).body.error).toMatchObject({ code: 'OUTBOXER_INVALID_REQUEST' });
    expect((await call(base, '/api/pending/delete', { method: 'POST', body: { ids: ['nope'] } })).body.error).toMatchObject({ code: 'OUTBOXER_INVALID_ID' });
    expect(Number((await fixture.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n)).toBe(4);

    expect(await call(base, '/api/pending/delete', { method: 'POST', body: { ids } })).toEqual({ status: 200, body: { deleted: 2 } });
    expect(await call(base, '/api/pending/delete', { method: 'POST', body: { ids } })).toEqual({ status: 200, body: { deleted: 0 } });
    const left = await fixture.pool.query(`SELECT id::text AS id, state FROM ${table} ORDER BY seq`);
    expect(left.rows).toEqual([
      { id: kept, state: 'pending' },
      { id: dead, state: 'dead' },
    ]);
    expect(audits()).toEqual([
      expect.objectContaining({ action: 'pending.delete', requested: 4, ids: [a, b, dead, UNKNOWN], changed: 2, remoteAddress: '127.0.0.1' }),
      expect.objectContaining({ action: 'pending.delete', requested: 4, changed: 0 }),
    ]);
    expect(logger.lines.join('\n')).not.toContain(token);
  });

  describe('deleting a message a relay is publishing', () => {
    async function racing(fixture: PostgresFixture) {
      const publisher = new RecordingPublisher();
      const errors: string[] = [];
      const relay = new Relay(fixture.store, publisher, {
        pollIntervalMs: 20,
        maxPollIntervalMs: 100,
        publishTimeoutMs: 5000,
        leaseMs: 15_000,
        errorBackoffMs: 50,
        maxErrorBackoffMs: 200,
        retry: { baseDelayMs: 200, maxDelayMs: 200, jitter: 0 },
        hooks: { onError: (event) => errors.push(`${event.stage}: ${event.error}`) },
      });
      relay.start();
      closeLater.push(() => relay.stop());
      return { publisher, errors, relay };
    }

    it('publishes it once all the same, completes without an error, and the later message of its key follows', async () => {
      const { fixture, base, table, insert } = await setup();
      const { publisher, errors } = await racing(fixture);
      publisher.holdConfirms();
      const first = await insert('t', 'k');
      await waitFor(() => publisher.inFlight === 1, { what: 'the relay to be publishing the first message' });
      expect(await call(base, '/api/pending/delete', { method: 'POST', body: { ids: [first] } })).toEqual({ status: 200, body: { deleted: 1 } });
      const second = await insert('t', 'k');
      publisher.releaseConfirms();
      await waitFor(() => publisher.delivered.length === 2, { what: 'both messages published' });
      expect(publisher.delivered.map((m) => m.id)).toEqual([first, second]);
      await waitFor(async () => Number((await fixture.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n) === 0, {
        what: 'the second row deleted as published',
      });
      expect(errors).toEqual([]);
    });

    it('a failed publish of it writes nothing for it, fails nothing, and the later message of its key is still published', async () => {
      const { fixture, base, table, insert } = await setup();
      const { publisher, errors } = await racing(fixture);
      publisher.holdConfirms();
      const first = await insert('t', 'k');
      const second = await insert('t', 'k');
      await waitFor(() => publisher.inFlight === 1, { what: 'the relay to be publishing the first message' });
      expect(await call(base, '/api/pending/delete', { method: 'POST', body: { ids: [first] } })).toEqual({ status: 200, body: { deleted: 1 } });
      // the publish in flight fails once its confirmation is let go: the relay writes a backoff for a row that is gone
      publisher.failWith = (message) => (message.id === first ? new Error('broker said no') : undefined);
      publisher.releaseConfirms();
      await waitFor(() => publisher.delivered.some((m) => m.id === second), { what: 'the second message published' });
      expect(publisher.delivered.map((m) => m.id)).toEqual([second]);
      await waitFor(async () => Number((await fixture.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n) === 0, { what: 'no row left' });
      expect(errors).toEqual([]);
    });
  });
});
