import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxerError } from '../../src/core/errors.js';
import type { OutboxOperator } from '../../src/core/ports/outbox-operator.js';
import { Relay } from '../../src/core/relay.js';
import { createOpsServer, type OpsServer } from '../../src/ops/http/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { opsHttpCaller, type Json } from '../support/ops-http-caller.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { isolatedExchange, recordingLogger } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const token = randomBytes(24).toString('hex');
const call = opsHttpCaller(token);

describe('outboxer/http on a PostgreSQL store with a relay publishing to RabbitMQ', () => {
  let fixture: PostgresFixture;
  let exchange: Awaited<ReturnType<typeof isolatedExchange>>;
  let relay: Relay;
  let server: OpsServer;
  let base: string;
  let deadIds: string[];
  const logger = recordingLogger();
  const registry = new Registry();
  const publishedCounter = new Counter({ name: 'http_test_published_total', help: 'messages the test saw published', registers: [registry] });
  const closeLater: (() => Promise<void>)[] = [];

  const insert = async (topic: string, count: number): Promise<string[]> => {
    const result = await fixture.pool.query(
      `INSERT INTO "${fixture.schema}".outbox (topic, key, type, payload) SELECT $1, 'k' || n, 'test.event', jsonb_build_object('n', n) FROM generate_series(1, $2) n RETURNING id::text AS id`,
      [topic, count],
    );
    return result.rows.map((row: { id: string }) => row.id);
  };
  const delivered = () => new Set(exchange.deliveries.map((delivery) => String(delivery.properties.messageId)));
  const waitForDelivery = (ids: readonly string[], what: string) => waitFor(() => ids.every((id) => delivered().has(id)), { what });
  const deadCount = async () => Number((await fixture.pool.query(`SELECT count(*) AS n FROM "${fixture.schema}".outbox WHERE state = 'dead'`)).rows[0].n);

  beforeAll(async () => {
    fixture = await createPostgresFixture();
    exchange = await isolatedExchange();
    // Three dead messages, made before any relay runs: as parked after their attempts ran out.
    deadIds = await insert(exchange.topic('dead'), 3);
    await fixture.pool.query(
      `UPDATE "${fixture.schema}".outbox SET state = 'dead', dead_at = now(), attempts = 10, last_error = 'OUTBOXER_PUBLISH_TIMEOUT: no confirmation' WHERE id = ANY($1::uuid[])`,
      [deadIds],
    );
    const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange: exchange.exchange, confirmTimeoutMs: 2000 });
    relay = new Relay(fixture.store, publisher, {
      pollIntervalMs: 50,
      maxPollIntervalMs: 200,
      publishTimeoutMs: 1000,
      leaseMs: 3000,
      errorBackoffMs: 100,
      maxErrorBackoffMs: 400,
      hooks: { onPublished: () => publishedCounter.inc() },
    });
    await relay.verify();
    relay.start();
    closeLater.push(async () => {
      await relay.stop();
      await publisher.close();
    });
    server = createOpsServer({ operator: fixture.store, relay, metrics: registry, port: 0, adminToken: token, logger });
    base = (await server.listen()).url;
    await waitFor(() => relay.health().relayId !== undefined && relay.health().partitions.length === 64, { what: 'the relay to hold every partition' });
  });

  afterAll(async () => {
    await server?.close();
    for (const close of closeLater.reverse()) await close();
    await exchange?.cleanup();
    await fixture?.cleanup();
  });

  it('GET /health/live and /health/ready answer 200 while the relay runs', async () => {
    expect(await call(base, '/health/live')).toMatchObject({ status: 200, body: { status: 'live' } });
    expect(await call(base, '/health/ready')).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('GET /api/info says what the server allows', async () => {
    expect((await call(base, '/api/info')).body).toEqual({ version, mutations: 'enabled', readRequiresToken: false, payloads: 'hidden' });
  });

  it("GET /api/stats gives the store's counts and this relay's health", async () => {
    const { status, body } = await call(base, '/api/stats');
    expect(status).toBe(200);
    expect(body.stats).toEqual({ pending: 0, scheduled: 0, published: 0, dead: 3, oldestPendingAgeSeconds: 0 });
    expect(body.relay).toMatchObject({
      running: true,
      owner: relay.options.owner,
      relayId: relay.health().relayId,
      database: { reachable: true },
      partitionCount: 64,
    });
    expect(Math.abs(Date.parse(String(body.at)) - Date.now())).toBeLessThan(60_000);
  });

  it('GET /api/relays names this relay among the live ones, with its partitions', async () => {
    const { body } = await call(base, '/api/relays');
    const self = relay.health().relayId;
    expect(body.self).toBe(self);
    const group = body.group as { partitionCount: number; relays: { id: string; name: string; partitions: number[] }[]; unowned: number[] };
    expect(group.partitionCount).toBe(64);
    expect(group.relays).toEqual([expect.objectContaining({ id: self, name: relay.options.owner, leaving: false, partitions: relay.health().partitions })]);
    expect(group.unowned).toEqual([]);
  });

  it('GET /api/dead lists the dead messages with their reasons and no payload; limit bounds it', async () => {
    const { body } = await call(base, '/api/dead');
    const dead = body.dead as Json[];
    expect(dead.map((message) => message.id).sort()).toEqual([...deadIds].sort());
    for (const message of dead) {
      expect(Object.keys(message).sort()).toEqual(['attempts', 'createdAt', 'deadAt', 'destination', 'id', 'key', 'reason', 'topic', 'type']);
      expect(message).toMatchObject({
        topic: exchange.topic('dead'),
        destination: null,
        type: 'test.event',
        attempts: 10,
        reason: 'OUTBOXER_PUBLISH_TIMEOUT: no confirmation',
      });
      expect(Number.isNaN(Date.parse(String(message.deadAt)))).toBe(false);
    }
    expect(((await call(base, '/api/dead?limit=2')).body.dead as Json[]).length).toBe(2);
  });

  it('POST /api/dead/retry brings a dead message back and the relay publishes it; retrying it again changes nothing', async () => {
    const [first] = deadIds as [string];
    expect(await call(base, '/api/dead/retry', { method: 'POST', body: { ids: [first.toUpperCase()] } })).toMatchObject({ status: 200, body: { retried: 1 } });
    await waitForDelivery([first], 'the retried message to be published');
    expect(await call(base, '/api/dead/retry', { method: 'POST', body: { ids: [first] } })).toMatchObject({ status: 200, body: { retried: 0 } });
    const auditLines = logger.lines.map((line) => JSON.parse(line) as Json).filter((line) => line.audit === true);
    expect(auditLines).toContainEqual(expect.objectContaining({ action: 'dead.retry', requested: 1, ids: [first], changed: 1, remoteAddress: '127.0.0.1' }));
    expect(logger.lines.join('\n')).not.toContain(token);
  });

  it('POST /api/dead/purge deletes one; {"all": true} retries the rest, which get published', async () => {
    const [, second, third] = deadIds as [string, string, string];
    expect(await call(base, '/api/dead/purge', { method: 'POST', body: { ids: [second] } })).toMatchObject({ status: 200, body: { purged: 1 } });
    expect((await fixture.pool.query(`SELECT 1 FROM "${fixture.schema}".outbox WHERE id = $1`, [second])).rowCount).toBe(0);
    expect(await call(base, '/api/dead/retry', { method: 'POST', body: { all: true } })).toMatchObject({ status: 200, body: { retried: 1 } });
    await waitForDelivery([third], 'the message retried with all to be published');
    expect(await deadCount()).toBe(0);
    expect((await call(base, '/api/dead')).body).toEqual({ dead: [] });
    expect(await call(base, '/api/dead/purge', { method: 'POST', body: { all: true } })).toMatchObject({ status: 200, body: { purged: 0 } });
  });

  it('POST /api/topics/pause holds a topic for the relay, GET /api/topics shows its backlog, /resume lets it go', async () => {
    const topic = exchange.topic('held');
    expect(await call(base, '/api/topics/pause', { method: 'POST', body: { topic, reason: 'consumer maintenance' } })).toMatchObject({
      status: 200,
      body: { paused: true },
    });
    expect(await call(base, '/api/topics/pause', { method: 'POST', body: { topic, reason: 'again' } })).toMatchObject({ status: 200, body: { paused: false } });
    const paused = (await call(base, '/api/topics/paused')).body.paused as Json[];
    expect(paused).toEqual([{ topic, reason: 'consumer maintenance', pausedAt: expect.any(String) }]);
    await waitFor(() => relay.health().pausedTopics.includes(topic), { what: 'the relay to read the pause' });

    const held = await insert(topic, 3);
    await waitFor(
      async () => {
        const topics = (await call(base, '/api/topics')).body.topics as { topic: string; pending: number; relayPause: unknown }[];
        // an operator's pause is in /api/topics/paused; relayPause is the relay's own (a missing destination)
        return topics.some((lag) => lag.topic === topic && lag.pending === 3 && lag.relayPause === null);
      },
      { what: 'the held topic in /api/topics' },
    );
    expect(held.some((id) => delivered().has(id))).toBe(false);

    expect(await call(base, '/api/topics/resume', { method: 'POST', body: { topic } })).toMatchObject({ status: 200, body: { resumed: true } });
    expect(await call(base, '/api/topics/resume', { method: 'POST', body: { topic } })).toMatchObject({ status: 200, body: { resumed: false } });
    await waitForDelivery(held, 'the held messages after the resume');
    expect((await call(base, '/api/topics/paused')).body).toEqual({ paused: [] });
    expect(((await call(base, '/api/topics?limit=1')).body.topics as Json[]).length).toBeLessThanOrEqual(1);
  });

  it('GET /api/topics shows a topic the relay paused by itself (no queue bound), with its reason, since when and held count; not once bound', async () => {
    const topic = exchange.unroutableTopic;
    const started = Date.now();
    const held = await insert(topic, 2);
    interface Lag {
      topic: string;
      pending: number;
      relayPause: { reason: string; since: string; held: number } | null;
    }
    const [first] = await waitFor(
      async () => {
        const topics = (await call(base, '/api/topics?limit=1')).body.topics as Lag[];
        return topics[0]?.relayPause?.held === 2 ? topics : undefined;
      },
      { what: 'the relay-paused topic first in /api/topics' },
    );
    expect(first).toEqual({
      topic,
      destination: null,
      pending: 2,
      oldestPendingAgeSeconds: expect.any(Number),
      relayPause: { reason: expect.stringMatching(/^OUTBOXER_UNROUTABLE: /), since: expect.any(String), held: 2 },
    });
    expect(Date.parse(first?.relayPause?.since ?? '')).toBeGreaterThanOrEqual(started - 1000);
    expect(Date.parse(first?.relayPause?.since ?? '')).toBeLessThanOrEqual(Date.now());
    expect(((await call(base, '/api/stats')).body.relay as Json).pausedTopics).toContain(topic);

    await exchange.admin.channel.bindQueue(exchange.queue, exchange.exchange, topic);
    await waitForDelivery(held, 'the held messages once a queue is bound');
    await waitFor(async () => ((await call(base, '/api/topics')).body.topics as Lag[]).every((lag) => lag.relayPause === null), {
      what: 'no relay pause in /api/topics',
    });
  });

  it('GET /api/topics shares one topicLag read between concurrent requests and serves it again for 5 s, to every limit, saying when it was read', async () => {
    const store = fixture.store;
    let reads = 0;
    const counting = {
      stats: () => store.stats(),
      listDead: (limit, filter) => store.listDead(limit, filter),
      retryDead: (ids, filter) => store.retryDead(ids, filter),
      purgeDead: (ids, filter) => store.purgeDead(ids, filter),
      topicLag: (limit) => {
        reads += 1;
        return store.topicLag(limit);
      },
    } as OutboxOperator;
    const own = createOpsServer({ operator: counting, port: 0 });
    const { url } = await own.listen();
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, () => call(url, '/api/topics')));
      expect(reads).toBe(1);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
      const [first] = answers;
      for (const answer of answers) expect(answer.body).toEqual(first?.body);
      expect(Math.abs(Date.parse(String(first?.body.at)) - Date.now())).toBeLessThan(60_000);

      expect((await call(url, '/api/topics')).body).toEqual(first?.body);
      expect(reads).toBe(1);
      // Another limit is the same read cut to it: a thousand distinct limits cost one read, not a thousand.
      const one = (await call(url, '/api/topics?limit=1')).body;
      expect(one).toEqual({ at: first?.body.at, topics: (first?.body.topics as Json[]).slice(0, 1) });
      expect(reads).toBe(1);
    } finally {
      await own.close();
    }
  });

  it("GET /metrics serves the registry's text with its content type; HEAD answers the headers alone", async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(registry.contentType);
    expect(await response.text()).toMatch(/^http_test_published_total \d+$/m);
    const head = await fetch(`${base}/api/stats`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await head.text()).toBe('');
  });

  it('answers 501 OUTBOXER_NOT_SUPPORTED for what a store lacks; without metrics /metrics is 404; without a relay ready is 200', async () => {
    const store = fixture.store;
    const bare: OutboxOperator = {
      stats: () => store.stats(),
      listDead: (limit, filter) => store.listDead(limit, filter),
      retryDead: (ids, filter) => store.retryDead(ids, filter),
      purgeDead: (ids, filter) => store.purgeDead(ids, filter),
    } as OutboxOperator;
    const plain = createOpsServer({ operator: bare, port: 0, adminToken: token });
    const { url } = await plain.listen();
    try {
      for (const [path, method, body] of [
        ['/api/topics', 'GET', undefined],
        ['/api/topics/paused', 'GET', undefined],
        ['/api/relays', 'GET', undefined],
        ['/api/topics/pause', 'POST', { topic: 'a.b' }],
        ['/api/topics/resume', 'POST', { topic: 'a.b' }],
        ['/api/destinations/paused', 'GET', undefined],
        ['/api/destinations/pause', 'POST', { destination: 'partner' }],
        ['/api/destinations/resume', 'POST', { destination: 'partner' }],
      ] as const) {
        const answer = await call(url, path, { method, body });
        expect(answer.status, path).toBe(501);
        expect((answer.body.error as Json).code).toBe('OUTBOXER_NOT_SUPPORTED');
      }
      expect(await call(url, '/metrics')).toMatchObject({ status: 404, body: { error: { code: 'OUTBOXER_NOT_FOUND' } } });
      expect(await call(url, '/health/ready')).toMatchObject({ status: 200, body: { status: 'ready' } });
      expect((await call(url, '/api/stats')).body).toMatchObject({ relay: null, stats: { dead: 0 } });
    } finally {
      await plain.close();
    }
  });

  it('close() ends at once with an idle keep-alive connection open, and the server cannot listen again', async () => {
    const other = createOpsServer({ operator: fixture.store, port: 0 });
    const { port } = await other.listen();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
    });
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitFor(() => received.endsWith('{"status":"live"}\n'), { what: 'the answer on the kept-alive connection' });
    expect(received).toMatch(/\r\nConnection: keep-alive\r\n/);
    await other.close();
    await socketClosed;
    const error = await other.listen().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutboxerError);
    expect((error as OutboxerError).code).toBe('OUTBOXER_CLOSED');
  });
});
