import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { createOpsServer, type OpsServer } from '../../src/ops/http/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { opsHttpCaller, type Json } from '../support/ops-http-caller.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { recordingLogger } from '../support/rabbitmq-harness.js';

const token = randomBytes(24).toString('hex');
const call = opsHttpCaller(token);

describe('outboxer/http: the dead messages and topic lag of each destination', () => {
  let fixture: PostgresFixture;
  let server: OpsServer;
  let base: string;
  let ids: { own: string; partner: string; archive: string };
  const logger = recordingLogger();

  beforeAll(async () => {
    fixture = await createPostgresFixture();
    // rows as a producer fans them out: one per destination, written through the store; no relay publishes them
    const db = fromPgPool(fixture.pool);
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const [own, partner, archive] = (await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(tx, [
        { topic: 'orders.created', type: 'order.created', key: 'k1', payload: { n: 1 } },
        { topic: 'orders.created', type: 'order.created', key: 'k1', payload: { n: 1 }, destination: 'partner' },
        { topic: 'orders.created', type: 'order.created', key: 'k2', payload: { n: 2 }, destination: 'archive' },
      ]),
    )) as [string, string, string];
    ids = { own, partner, archive };
    await fixture.pool.query(
      `UPDATE "${fixture.schema}".outbox SET state = 'dead', dead_at = now(), attempts = 3, last_error = 'OUTBOXER_PUBLISH_FAILED: refused' WHERE id <> $1`,
      [archive],
    );
    server = createOpsServer({ operator: fixture.store, port: 0, adminToken: token, logger });
    base = (await server.listen()).url;
  });

  afterAll(async () => {
    await server?.close();
    await fixture?.cleanup();
  });

  const listed = async (path: string) => ((await call(base, path)).body.dead as Json[]).map((message) => [message.id, message.destination]);

  it("GET /api/dead?destination= lists one destination's (default: those stored without one); each row names its own", async () => {
    expect(await listed('/api/dead')).toEqual([
      [ids.own, null],
      [ids.partner, 'partner'],
    ]);
    expect(await listed('/api/dead?destination=partner')).toEqual([[ids.partner, 'partner']]);
    expect(await listed('/api/dead?destination=default&limit=5')).toEqual([[ids.own, null]]);
    expect(await listed('/api/dead?destination=archive')).toEqual([]);
    const refused = await call(base, '/api/dead?destination=two%20words');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'OUTBOXER_INVALID_QUERY',
      message: expect.stringMatching(/^OUTBOXER_INVALID_DESTINATION: query parameter destination: destination "two words" is invalid/),
    });
  });

  it('GET /api/topics has one entry per topic and destination', async () => {
    const topics = (await call(base, '/api/topics')).body.topics as Json[];
    expect(topics).toEqual([{ topic: 'orders.created', destination: 'archive', pending: 1, oldestPendingAgeSeconds: expect.any(Number), relayPause: null }]);
  });

  it('POST /api/dead/retry and /purge with a destination change only its messages, and say so in the audit line', async () => {
    expect(await call(base, '/api/dead/retry', { method: 'POST', body: { all: true, destination: 'archive' } })).toMatchObject({
      status: 200,
      body: { retried: 0 },
    });
    expect(await call(base, '/api/dead/purge', { method: 'POST', body: { ids: [ids.own, ids.partner], destination: 'partner' } })).toMatchObject({
      status: 200,
      body: { purged: 1 },
    });
    const audits = logger.lines.map((line) => JSON.parse(line) as Json).filter((line) => line.audit === true);
    expect(audits.at(-1)).toMatchObject({ action: 'dead.purge', requested: 2, destination: 'partner', changed: 1 });
    expect(await call(base, '/api/dead/retry', { method: 'POST', body: { all: true, destination: 'default' } })).toMatchObject({
      status: 200,
      body: { retried: 1 },
    });
    const rows = await fixture.pool.query(`SELECT id::text AS id, state, destination FROM "${fixture.schema}".outbox ORDER BY seq`);
    expect(rows.rows).toEqual([
      { id: ids.own, state: 'pending', destination: null },
      { id: ids.archive, state: 'pending', destination: 'archive' },
    ]);
    const refused = await call(base, '/api/dead/retry', { method: 'POST', body: { all: true, destination: 'no/such' } });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'OUTBOXER_INVALID_REQUEST',
          message: expect.stringMatching(/^destination: OUTBOXER_INVALID_DESTINATION: destination "no\/such" is invalid/),
        },
      },
    });
  });

  it('the curl commands of docs/fan-out.md pause, list and resume a destination, as shown', async () => {
    const doc = readFileSync(new URL('../../docs/fan-out.md', import.meta.url), 'utf8');
    const block = /<!-- run by test\/integration\/http-api-destinations\.test\.ts[^>]*-->\n```sh\n([^`]*)```/.exec(doc)?.[1] ?? '';
    expect(block).toContain('/api/destinations/pause');
    const script = block.replaceAll('http://127.0.0.1:9465', base);
    const { stdout } = await promisify(execFile)('sh', ['-c', script], { env: { ...process.env, OUTBOXER_ADMIN_TOKEN: token }, timeout: 30_000 });
    const answers = stdout
      .replaceAll('}{', '}\n{')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Json);
    expect(answers).toEqual([
      { paused: true },
      { paused: [{ destination: 'partner', reason: 'partner maintenance, INC-12', pausedAt: expect.stringMatching(/Z$/) }] },
      { resumed: true },
    ]);
  });

  it('POST /api/destinations/pause and /resume pause a whole destination with the admin token, audited; GET /api/destinations/paused lists them', async () => {
    const audits = () => logger.lines.map((line) => JSON.parse(line) as Json).filter((line) => line.audit === true);
    expect((await call(base, '/api/destinations/paused')).body).toEqual({ paused: [] });
    expect((await call(base, '/api/destinations/pause', { method: 'POST', body: { destination: 'partner' }, auth: null })).status).toBe(401);
    expect(await call(base, '/api/destinations/pause', { method: 'POST', body: { destination: 'partner', reason: ' partner maintenance ' } })).toMatchObject({
      status: 200,
      body: { paused: true },
    });
    expect(audits().at(-1)).toMatchObject({ action: 'destinations.pause', destination: 'partner', reason: 'partner maintenance', changed: 1 });
    expect(await call(base, '/api/destinations/pause', { method: 'POST', body: { destination: 'partner', reason: 'again' } })).toMatchObject({
      status: 200,
      body: { paused: false },
    });
    expect(audits().at(-1)).toMatchObject({ action: 'destinations.pause', destination: 'partner', changed: 0 });
    expect(await call(base, '/api/destinations/pause', { method: 'POST', body: { destination: 'default' } })).toMatchObject({
      status: 200,
      body: { paused: true },
    });
    expect((await call(base, '/api/destinations/paused')).body).toEqual({
      paused: [
        { destination: 'partner', reason: 'partner maintenance', pausedAt: expect.stringMatching(/Z$/) },
        { destination: 'default', reason: '', pausedAt: expect.stringMatching(/Z$/) },
      ],
    });
    // an operator's destination pause is not a topic pause
    expect((await call(base, '/api/topics/paused')).body).toEqual({ paused: [] });

    for (const [body, message] of [
      [
        { destination: 'no/such' },
        /^a paused destination must be a destination's name, or "default" for the relay's own publisher: destination "no\/such" is invalid/,
      ],
      [{ destination: 7 }, /^a paused destination must be/],
      [{ destination: 'partner', reason: 'two\nlines' }, /^the reason for pausing destination "partner" must be/],
      [{ topic: 'orders.created' }, /^unknown field "topic"; the body is \{"destination": "<name>", "reason": "<why>"\}/],
    ] as const) {
      expect(await call(base, '/api/destinations/pause', { method: 'POST', body })).toMatchObject({
        status: 400,
        body: { error: { code: 'OUTBOXER_INVALID_REQUEST', message: expect.stringMatching(message) } },
      });
    }

    expect(await call(base, '/api/destinations/resume', { method: 'POST', body: { destination: 'partner' }, auth: null })).toMatchObject({ status: 401 });
    expect(await call(base, '/api/destinations/resume', { method: 'POST', body: { destination: 'partner' } })).toMatchObject({
      status: 200,
      body: { resumed: true },
    });
    expect(audits().at(-1)).toMatchObject({ action: 'destinations.resume', destination: 'partner', changed: 1 });
    expect(await call(base, '/api/destinations/resume', { method: 'POST', body: { destination: 'partner' } })).toMatchObject({
      status: 200,
      body: { resumed: false },
    });
    expect(await call(base, '/api/destinations/resume', { method: 'POST', body: { destination: 'default' } })).toMatchObject({
      status: 200,
      body: { resumed: true },
    });
    expect((await call(base, '/api/destinations/paused')).body).toEqual({ paused: [] });
  });
});
