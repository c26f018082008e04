import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Publisher } from '../../src/core/ports.js';
import { Relay } from '../../src/core/relay.js';
import { createOpsServer } from '../../src/ops/http/index.js';
import { createConsolePublisher } from '../../src/brokers/console/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { brokerHost, brokerPort, closedPort, isolatedExchange } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Fast timings, so that a fault shows within a second or two. */
const RELAY_OPTIONS = {
  pollIntervalMs: 50,
  maxPollIntervalMs: 200,
  publishTimeoutMs: 1000,
  leaseMs: 3000,
  errorBackoffMs: 100,
  maxErrorBackoffMs: 500,
} as const;

async function fixture(): Promise<PostgresFixture> {
  const created = await createPostgresFixture();
  cleanups.push(() => created.cleanup());
  return created;
}

/** A store on its own pool, to `url`, over the fixture's migrated schema. */
function storeAt(url: string, schema: string): PostgresOutboxStore {
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 2000 });
  pool.on('error', () => undefined);
  cleanups.push(() => pool.end());
  return new PostgresOutboxStore(fromPgPool(pool), { schema });
}

/** A relay on `store` and `publisher`, started, with an ops server in front; everything stopped after the test. */
async function served(store: PostgresOutboxStore, publisher: Publisher) {
  const relay = new Relay(store, publisher, RELAY_OPTIONS);
  relay.start();
  cleanups.push(async () => {
    await relay.stop();
    await publisher.close();
  });
  const server = createOpsServer({ operator: store, relay, port: 0 });
  const { url } = await server.listen();
  cleanups.push(() => server.close());
  const ready = async () => {
    const response = await fetch(`${url}/health/ready`);
    return { status: response.status, body: (await response.json()) as { status: string; reasons?: string[] } };
  };
  return { relay, url, ready };
}

const withProxy = async (port: number, host = '127.0.0.1') => {
  const proxy = await TcpProxy.start(port, host);
  cleanups.push(() => proxy.close());
  return proxy;
};

describe('/health/ready follows the relay: database and broker', () => {
  it('turns 503 with the reason while the database is cut off, and 200 again once it is back; /api/stats says 503 meanwhile', async () => {
    const { schema } = await fixture();
    const proxy = await withProxy(Number(new URL(services.postgresUrl).port || 5432));
    const proxied = new URL(services.postgresUrl);
    proxied.port = String(proxy.port);
    const store = storeAt(proxied.toString(), schema);
    const { relay, url, ready } = await served(store, createConsolePublisher({ write: () => undefined }));
    await waitFor(async () => relay.health().relayId !== undefined && (await ready()).status === 200, { what: 'ready while connected' });
    expect(await ready()).toEqual({ status: 200, body: { status: 'ready' } });

    proxy.setMode('refuse');
    const cut = await waitFor(
      async () => {
        const answer = await ready();
        return answer.status === 503 ? answer : undefined;
      },
      { what: 'not ready while the database is cut off' },
    );
    expect(cut.body.status).toBe('not ready');
    expect(cut.body.reasons).toEqual(['the database is unreachable']);
    const stats = await fetch(`${url}/api/stats`);
    expect(stats.status).toBe(503);
    expect(await stats.json()).toEqual({
      error: { code: 'OUTBOXER_DATABASE_UNAVAILABLE', message: expect.any(String) },
      relay: expect.objectContaining({ running: true }),
    });

    proxy.setMode('forward');
    await waitFor(async () => (await ready()).status === 200, { what: 'ready again once the database is back' });
  });

  it('a relay whose database was never reachable has not joined: 503 naming both; stopped, it says it is not running', async () => {
    const { schema } = await fixture();
    const nowhere = new URL(services.postgresUrl);
    nowhere.port = String(await closedPort());
    const { relay, url, ready } = await served(storeAt(nowhere.toString(), schema), createConsolePublisher({ write: () => undefined }));
    const answer = await waitFor(
      async () => {
        const result = await ready();
        return result.body.reasons?.length === 2 ? result : undefined;
      },
      { what: 'both reasons' },
    );
    expect(answer.status).toBe(503);
    // The open probe gives fixed sentences only; the driver's error (an address here) needs read access: /api/stats.
    expect(answer.body.reasons).toEqual(["the relay has not joined its table's group yet", 'the database is unreachable']);
    expect(JSON.stringify(answer.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|:\d{2,5}/);
    const stats = await fetch(`${url}/api/stats`);
    expect(stats.status).toBe(503);
    expect(((await stats.json()) as { relay: { database: { error?: string } } }).relay.database).toEqual({
      reachable: false,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    await relay.stop();
    expect((await ready()).body.reasons?.[0]).toBe('the relay is not running');
  });

  it('turns 503 while the broker is disconnected, and 200 again once the publisher has reconnected', async () => {
    const fx = await fixture();
    const exchange = await isolatedExchange();
    cleanups.push(() => exchange.cleanup());
    const proxy = await withProxy(brokerPort, brokerHost);
    const brokerUrl = new URL(services.amqpUrl);
    brokerUrl.hostname = '127.0.0.1';
    brokerUrl.port = String(proxy.port);
    const publisher = createRabbitMqPublisher({ url: brokerUrl.toString(), exchange: exchange.exchange, confirmTimeoutMs: 1000, connectTimeoutMs: 1000 });
    const { relay, ready } = await served(fx.store, publisher);
    await relay.verify(); // connects the publisher
    await waitFor(async () => (await ready()).status === 200, { what: 'ready with the broker connected' });

    proxy.setMode('refuse');
    const down = await waitFor(
      async () => {
        const answer = await ready();
        return answer.status === 503 ? answer : undefined;
      },
      { what: 'not ready while the broker is down' },
    );
    expect(down.body).toEqual({ status: 'not ready', reasons: ['the broker is disconnected'] });

    proxy.setMode('forward');
    // The publisher reconnects when it has something to publish.
    const inserted = await fx.pool.query(`INSERT INTO "${fx.schema}".outbox (topic, type, payload) VALUES ($1, 'test.event', '{}') RETURNING id::text AS id`, [
      exchange.topic('after'),
    ]);
    await exchange.waitForDeliveries(1, 20_000);
    expect(String(exchange.deliveries[0]?.properties.messageId)).toBe(inserted.rows[0].id);
    await waitFor(async () => (await ready()).status === 200, { what: 'ready again after the reconnect' });
  });
});
