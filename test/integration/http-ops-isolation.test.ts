import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboxOperator } from '../../src/core/ports/outbox-operator.js';
import { Relay } from '../../src/core/relay.js';
import { createOpsServer } from '../../src/ops/http/index.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { cliFixtures, waitUntil } from '../support/cli-fixtures.js';
import type { CliProcess } from '../support/cli-runner.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { recordingLogger } from '../support/rabbitmq-harness.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { services } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const { pool, start, freshSchema } = cliFixtures();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Pending rows whose lag is read in tens of ms here: a read per distinct `limit` used to take every connection. */
const BACKLOG_ROWS = 100_000;
/** Tokenless clients on loopback, each asking `/api/topics?limit=N` again as soon as answered, no two with the same N at once. */
const FLOOD_CLIENTS = 128;
const FRESH_MESSAGES = 5;
/** Each fresh message is published within this while the flood runs (0.1 to 0.5 s without a flood, on 2 cores). */
const PUBLISH_BOUND_MS = 5000;
/** The server reads the lag at most once per 5 s (TOPIC_LAG_CACHE_MS), whatever the limits asked. */
const LAG_READ_EVERY_MS = 5000;

/**
 * A backlog that makes the lag read costly and that the relay does not publish: scheduled a day out. The rows are
 * stored in partition order, so that the relay's own pass over each partition's scheduled rows reads few pages and
 * its publishing without a flood stays fast.
 */
async function addBacklog(db: pg.Pool, schema: string): Promise<void> {
  const s = `"${schema}"`;
  await db.query(
    `INSERT INTO ${s}.outbox (id, topic, type, payload, due_at)
     SELECT id, 'backlog.t' || (n % 20), 'backlog.event', '{}', now() + interval '1 day'
     FROM (SELECT ${s}.outboxer_uuid_v7() AS id, n FROM generate_series(1, $1::int) AS n) AS r
     ORDER BY ${s}.outboxer_partition(NULL, id, 64), id`,
    [BACKLOG_ROWS],
  );
  await db.query(`ANALYZE ${s}.outbox`);
}

interface FloodResult {
  readonly requests: number;
  readonly statuses: Readonly<Record<number, number>>;
  /** The `at` of every 200 answer: one per lag read that answered someone. */
  readonly readsSeen: ReadonlySet<string>;
  readonly ms: number;
}

/** Starts the flood; `stop()` ends it once every client's request in progress is answered. */
function flood(url: string): { stop(): Promise<FloodResult> } {
  let stopped = false;
  let requests = 0;
  const statuses: Record<number, number> = {};
  const readsSeen = new Set<string>();
  const started = performance.now();
  const clients = Array.from({ length: FLOOD_CLIENTS }, async (_, client) => {
    for (let round = 0; !stopped; round += 1) {
      const limit = ((round * FLOOD_CLIENTS + client) % 1000) + 1;
      requests += 1;
      try {
        const answer = await fetch(`${url}/api/topics?limit=${limit}`);
        const body = (await answer.json()) as { at?: string };
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (answer.status === 200 && body.at !== undefined) readsSeen.add(body.at);
      } catch {
        statuses[0] = (statuses[0] ?? 0) + 1;
      }
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(clients);
      return { requests, statuses, readsSeen, ms: performance.now() - started };
    },
  };
}

/** Inserts fresh messages one by one (on a connection of the test's own) and gives how long each took to be published. */
async function publishLatencies(schema: string, published: (id: string) => boolean, what: () => string): Promise<number[]> {
  const client = new pg.Client({ connectionString: services.postgresUrl });
  await client.connect();
  const latencies: number[] = [];
  try {
    for (let index = 0; index < FRESH_MESSAGES; index += 1) {
      const { rows } = await client.query(
        `INSERT INTO "${schema}".outbox (topic, type, payload) VALUES ('fresh.t', 'fresh.event', '{}') RETURNING id::text AS id`,
      );
      const id = (rows[0] as { id: string }).id;
      const inserted = performance.now();
      try {
        await waitFor(() => published(id), { timeoutMs: PUBLISH_BOUND_MS, intervalMs: 10, what: `fresh message ${index + 1} to be published` });
      } catch (error) {
        throw new Error(`${(error as Error).message}; published so far in ${latencies.map(Math.round).join(', ') || '-'} ms; ${what()}`, { cause: error });
      }
      latencies.push(performance.now() - inserted);
    }
  } finally {
    await client.end();
  }
  return latencies;
}

/** The store with every call counted, and the most calls running at once: what the server asks of the database. */
function countingStore(store: OutboxOperator) {
  const counts: Record<string, number> = {};
  const state = { running: 0, mostAtOnce: 0 };
  const operator = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function' || typeof name !== 'string') return value;
      return async (...args: unknown[]) => {
        counts[name] = (counts[name] ?? 0) + 1;
        state.running += 1;
        state.mostAtOnce = Math.max(state.mostAtOnce, state.running);
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          state.running -= 1;
        }
      };
    },
  });
  return { operator, counts, state };
}

/** The URL the daemon's HTTP server listens on, from its log line. */
async function listeningUrl(relay: CliProcess): Promise<string> {
  await relay.waitForOutput((out) => out.stderr.includes('"ops http server listening"'), 'the HTTP server to listen');
  const line = relay.stderr.split('\n').find((text) => text.includes('"ops http server listening"')) ?? '';
  return (JSON.parse(line) as { url: string }).url;
}

const summary = (result: FloodResult) =>
  `${result.requests} requests in ${Math.round(result.ms)} ms, statuses ${JSON.stringify(result.statuses)}, ${result.readsSeen.size} lag reads seen`;

describe('the HTTP server of operations cannot starve the relay', () => {
  it(`outboxer relay: ${FLOOD_CLIENTS} tokenless clients asking /api/topics with distinct limits over ${BACKLOG_ROWS} pending rows delay no publish, cost one lag read per 5 s, on 2 connections of the server's own`, async () => {
    const { env, schema } = freshSchema();
    await new PostgresOutboxStore(fromPgPool(pool), { schema }).migrate();
    await addBacklog(pool, schema);
    const relay = start(['relay', '--poll-interval-ms', '50', '--max-poll-interval-ms', '100', '--http-port', '0'], env);
    const url = await listeningUrl(relay);
    await waitUntil(async () => (await fetch(`${url}/health/ready`)).status === 200, 'ready', relay);

    const load = flood(url);
    let latencies: number[];
    const serverConnections: number[] = [];
    let result: FloodResult | undefined;
    try {
      latencies = await publishLatencies(
        schema,
        (id) => relay.stdout.includes(`id=${id}`),
        () => 'the relay stderr:\n' + relay.stderr.slice(-2000),
      );
      // The server's own sessions (the relay's are `outboxer relay`), those that read this test's table.
      const sessions = await pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'outboxer relay http' AND query LIKE $1`, [
        `%"${schema}"%`,
      ]);
      serverConnections.push((sessions.rows[0] as { n: number }).n);
    } finally {
      result = await load.stop();
    }
    expect(
      latencies.every((ms) => ms < PUBLISH_BOUND_MS),
      `${latencies.map(Math.round).join(', ')} ms; ${summary(result)}`,
    ).toBe(true);
    // Every request was answered, from the shared read: none refused, none failed.
    expect(Object.keys(result.statuses), summary(result)).toEqual(['200']);
    expect(result.readsSeen.size, summary(result)).toBeLessThanOrEqual(Math.floor(result.ms / LAG_READ_EVERY_MS) + 2);
    expect(serverConnections[0]).toBeGreaterThanOrEqual(1);
    expect(serverConnections[0]).toBeLessThanOrEqual(2);
    const exit = await relay.stop('SIGTERM');
    expect(exit.code, exit.stderr).toBe(0);
  });

  it(`an embedded relay and createOpsServer on one pool: the same flood delays no publish, and the server makes one lag read per 5 s and at most 2 store calls at once`, async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    await addBacklog(fixture.pool, fixture.schema);
    const publisher = new RecordingPublisher();
    const relay = new Relay(fixture.store, publisher, { pollIntervalMs: 50, maxPollIntervalMs: 100 });
    await relay.verify();
    relay.start();
    cleanups.push(() => relay.stop());
    const calls = countingStore(fixture.store);
    const server = createOpsServer({ operator: calls.operator, relay, port: 0 });
    const { url } = await server.listen();
    cleanups.push(() => server.close());
    await waitFor(() => relay.health().partitions.length === 64, { what: 'the relay to hold every partition' });

    const load = flood(url);
    let latencies: number[];
    let result: FloodResult | undefined;
    try {
      latencies = await publishLatencies(
        fixture.schema,
        (id) => publisher.delivered.some((message) => message.id === id),
        () => `store calls ${JSON.stringify(calls.counts)}`,
      );
    } finally {
      result = await load.stop();
    }
    const what = `${latencies.map(Math.round).join(', ')} ms; ${summary(result)}; store calls ${JSON.stringify(calls.counts)}, at most ${calls.state.mostAtOnce} at once`;
    expect(
      latencies.every((ms) => ms < PUBLISH_BOUND_MS),
      what,
    ).toBe(true);
    expect(Object.keys(result.statuses), what).toEqual(['200']);
    expect(calls.counts.topicLag ?? 0, what).toBeGreaterThanOrEqual(1);
    expect(calls.counts.topicLag ?? 0, what).toBeLessThanOrEqual(Math.floor(result.ms / LAG_READ_EVERY_MS) + 2);
    expect(calls.state.mostAtOnce, what).toBeLessThanOrEqual(2);
  });

  it('beyond its store calls at once and those waiting, a request is refused at once with 503 OUTBOXER_BUSY and Retry-After, and one warning says so', async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const slow = countingStore(fixture.store);
    // Each pause holds its connection for 0.2 s first: a change that takes a while, as on a loaded database.
    const operator = new Proxy(slow.operator, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name);
        if (name !== 'pauseTopic' || typeof value !== 'function') return value;
        return async (topic: string, reason: string) => {
          await fixture.pool.query('SELECT pg_sleep(0.2)');
          return (value as OutboxOperator['pauseTopic']).call(target, topic, reason);
        };
      },
    });
    const logger = recordingLogger();
    const token = 'busy-test-token-0123456789abcdef';
    const server = createOpsServer({ operator, port: 0, adminToken: token, storeConcurrency: 1, logger });
    const { url } = await server.listen();
    cleanups.push(() => server.close());

    // 1 runs, 16 wait their turn, the last 3 are refused before any of the others is done.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        fetch(`${url}/api/topics/pause`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
          body: JSON.stringify({ topic: `busy.t${index}` }),
        }),
      ),
    );
    const refused = answers.filter((answer) => answer.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    expect(answers.filter((answer) => answer.status !== 503).every((answer) => answer.status === 200)).toBe(true);
    for (const answer of refused) {
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('OUTBOXER_BUSY');
    }
    expect(slow.state.mostAtOnce).toBe(1);
    expect(slow.counts.pauseTopic).toBe(answers.length - refused.length);
    const warnings = logger.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.message === 'ops http server busy: store requests refused with 503 OUTBOXER_BUSY');
    expect(warnings).toEqual([expect.objectContaining({ level: 'warn', refused: 1, concurrency: 1, queue: 16 })]);
    // Reads are shared: many at once cost one store call each, and none is refused.
    const reads = await Promise.all(Array.from({ length: 40 }, () => fetch(`${url}/api/topics/paused`)));
    expect(reads.map((answer) => answer.status)).toEqual(Array.from({ length: 40 }, () => 200));
  });
});
