import amqp from 'amqplib';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboxerError } from '../../src/core/errors.js';
import type { Publisher } from '../../src/core/ports.js';
import { Relay } from '../../src/core/relay.js';
import { isMisconfiguration } from '../../src/core/start-checks.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { PrivateNatsServer, recordingLogger } from '../support/nats-harness.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { closedPort } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function migratedStore() {
  const fixture = await createPostgresFixture();
  cleanups.push(() => fixture.cleanup());
  return fixture.store;
}

function track(publisher: Publisher): Publisher {
  cleanups.push(() => publisher.close());
  return publisher;
}

async function rejection(promise: Promise<unknown>): Promise<OutboxerError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboxerError);
  return error as OutboxerError;
}

describe('relay.verify(): the start checks', () => {
  it('passes on a migrated table and a reachable broker, and declares the exchange before any publish', async () => {
    const exchange = uniqueName('verify_ex');
    const relay = new Relay(await migratedStore(), track(createRabbitMqPublisher({ url: services.amqpUrl, exchange })));
    await relay.verify();
    const connection = await amqp.connect(services.amqpUrl);
    cleanups.push(() => connection.close());
    const channel = await connection.createChannel();
    await expect(channel.checkExchange(exchange)).resolves.toBeDefined();
    await channel.deleteExchange(exchange);
  });

  it('rejects an exchange declared with another type with OUTBOXER_EXCHANGE_REFUSED', async () => {
    const exchange = uniqueName('verify_direct');
    const connection = await amqp.connect(services.amqpUrl);
    cleanups.push(() => connection.close());
    const channel = await connection.createChannel();
    await channel.assertExchange(exchange, 'direct', { durable: true });
    cleanups.push(() => channel.deleteExchange(exchange));
    const relay = new Relay(await migratedStore(), track(createRabbitMqPublisher({ url: services.amqpUrl, exchange, exchangeType: 'topic' })));
    const error = await rejection(relay.verify());
    expect(error.code).toBe('OUTBOXER_EXCHANGE_REFUSED');
    expect(error.message).toMatch(/PRECONDITION_FAILED/);
    expect(error.message).toContain(`exchange "${exchange}"`);
  });

  it('rejects a table that was never migrated with OUTBOXER_NOT_MIGRATED, and names the table and the fix', async () => {
    const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
    cleanups.push(() => pool.end());
    const schema = uniqueName('nomig');
    const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
    const error = await rejection(new Relay(store, track(createRabbitMqPublisher({ url: services.amqpUrl }))).verify());
    expect(error.code).toBe('OUTBOXER_NOT_MIGRATED');
    expect(error.message).toContain(`"${schema}"."outbox"`);
    expect(error.message).toContain("run 'outboxer migrate'");
    expect(isMisconfiguration(error)).toBe(true);
  });

  it('rejects refused NATS credentials with OUTBOXER_AUTH_FAILED, the password never shown', async () => {
    const pass = `pw-${uniqueName('x')}`;
    const server = await PrivateNatsServer.create({ user: 'relay', pass });
    cleanups.push(() => server.destroy());
    await server.start();
    const wrong = `${pass}-wrong`;
    const publisher = track(createNatsPublisher({ servers: `nats://relay:${wrong}@127.0.0.1:${server.port}`, connectTimeoutMs: 3000, publishTimeoutMs: 3000 }));
    const error = await rejection(new Relay(await migratedStore(), publisher).verify());
    expect(error.code).toBe('OUTBOXER_AUTH_FAILED');
    expect(`${error.message}\n${error.stack ?? ''}\n${String(error.cause)}`).not.toContain(wrong);
  });

  it('lets a broker that is merely down through, with a warning: the relay rides the outage out once started', async () => {
    const logger = recordingLogger();
    const publisher = track(createRabbitMqPublisher({ url: `amqp://guest:guest@127.0.0.1:${await closedPort()}`, connectTimeoutMs: 1000 }));
    await new Relay(await migratedStore(), publisher, { logger }).verify();
    expect(logger.lines.some((line) => line.includes('start check: the broker is out of reach now') && line.includes('OUTBOXER_BROKER_UNAVAILABLE'))).toBe(
      true,
    );
  });
});
