import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { createOpsServer } from '../../src/ops/http/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { cliEnv, runCli } from '../support/cli-runner.js';
import { v2Timing } from '../support/partition-relay-fixture.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { isolatedExchange } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface ApiTopic {
  topic: string;
  pending: number;
  relayPause: { reason: string; since: string; held: number } | null;
}

/**
 * Issue 20, item 4: a topic the relay paused by itself (no queue bound for it) is shown, with its reason and since
 * when, by every process that reads the table: the admin API of any ops server, `outboxer topics list` and
 * `outboxer status`; and no longer once its destination exists and its messages are published.
 */
describe('a topic whose destination is missing is shown as paused by the relay, everywhere', () => {
  it('RabbitMQ, no queue bound: /api/topics, topics list and status show it with its reason and since; gone once bound and published', async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const fx = await isolatedExchange();
    cleanups.push(() => fx.cleanup());
    const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange: fx.exchange, confirmTimeoutMs: 5000 });
    cleanups.push(() => publisher.close());
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const pausedAt: number[] = [];
    const relay: Relay = outbox.createRelay(publisher, {
      ...v2Timing,
      errorBackoffMs: 200,
      maxErrorBackoffMs: 1000,
      hooks: { onTopicPaused: () => void pausedAt.push(Date.now()) },
    });
    cleanups.push(() => relay.stop());
    const late = fx.unroutableTopic;
    const ready = fx.topic('ready');
    await outbox.transaction(fromPgPool(fixture.pool), (tx) =>
      outbox.enqueueMany(tx, [
        ...Array.from({ length: 5 }, (_, i) => ({ topic: late, type: 'test.event', key: `k${i % 2}`, payload: { i } })),
        ...Array.from({ length: 3 }, (_, i) => ({ topic: ready, type: 'test.event', payload: { i } })),
      ]),
    );
    const before = Date.now();
    relay.start();
    await waitFor(() => pausedAt.length > 0, { what: 'the relay to pause the topic without a queue' });
    await fx.waitForDeliveries(3);

    // Another process's ops server (no relay in it): it reads the pause from the held rows.
    const server = createOpsServer({ operator: fixture.store, port: 0 });
    cleanups.push(() => server.close());
    const { url } = await server.listen();
    const topics = await waitFor(
      async () => {
        const body = (await (await fetch(`${url}/api/topics?limit=1`)).json()) as { topics: ApiTopic[] };
        return body.topics[0]?.relayPause?.held === 5 ? body.topics : undefined;
      },
      { what: 'every message of the topic held, in /api/topics' },
    );
    // limit=1: a held topic comes first, whatever the backlog of others
    expect(topics).toEqual([
      {
        topic: late,
        destination: null,
        pending: 5,
        oldestPendingAgeSeconds: expect.any(Number),
        relayPause: { reason: expect.stringMatching(/^OUTBOXER_UNROUTABLE: .*no queue is bound/), since: expect.any(String), held: 5 },
      },
    ]);
    const since = Date.parse(topics[0]?.relayPause?.since ?? '');
    expect(since).toBeGreaterThanOrEqual(before - 1000);
    expect(since).toBeLessThanOrEqual((pausedAt[0] as number) + 1000);
    const sinceIso = new Date(since).toISOString();

    const env = cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl, OUTBOXER_SCHEMA: fixture.schema });
    const listed = await runCli(['topics', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      { topic: late, destination: null, pausedBy: 'relay', reason: expect.stringMatching(/^OUTBOXER_UNROUTABLE: /), pausedAt: sinceIso, held: 5 },
    ]);
    const table = await runCli(['topics', 'list'], env);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/^topic\s+destination\s+paused by\s+paused at\s+reason$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${late.replaceAll('.', '\\.')}\\s+default\\s+relay\\s+${sinceIso}\\s+destination missing: OUTBOXER_UNROUTABLE: .* \\(5 message\\(s\\) held\\)$`,
      ),
    );
    expect(lines[2]).toMatch(/^1 topic\(s\) held by the relays: their destination is missing .*publishes by itself once it exists$/);

    const status = await runCli(['status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(
        `\\npaused topics:\\ntopic\\s+destination\\s+paused by\\s+paused at\\s+reason\\n${late.replaceAll('.', '\\.')}\\s+default\\s+relay\\s+${sinceIso}\\s+destination missing: OUTBOXER_UNROUTABLE: `,
      ),
    );
    const statusJson = await runCli(['status', '--json'], env);
    expect(JSON.parse(statusJson.stdout)).toMatchObject({ pausedTopics: [{ topic: late, pausedBy: 'relay', pausedAt: sinceIso, held: 5 }] });

    // The destination appears: the relay probes, publishes, and the pause is gone from every view.
    await fx.admin.channel.bindQueue(fx.queue, fx.exchange, late);
    await fx.waitForDeliveries(8, 20_000);
    await waitFor(async () => (await fixture.store.stats()).pending + (await fixture.store.stats()).scheduled === 0, { what: 'every message published' });
    expect(await fixture.store.topicLag(10)).toEqual([]);
    expect((await runCli(['topics', 'list'], env)).stdout).toBe(`no paused topics in ${fixture.schema}.outbox\n`);
    expect((await runCli(['status'], env)).stdout).toContain('\npaused topics: none\n');
  });
});
