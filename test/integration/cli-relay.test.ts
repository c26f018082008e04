import amqp from 'amqplib';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/core/redact.js';
import { cliFixtures, version, waitUntil } from '../support/cli-fixtures.js';
import { services, uniqueName } from '../support/services.js';

const { pool, freshSchema, start, migrated, insert, countRows } = cliFixtures();

describe('outboxer CLI: relay', () => {
  it('publishes pending rows with --publisher console, survives dropped connections, and stops on SIGTERM with exit 0', async () => {
    const appName = uniqueName('cli_relay');
    // Options from the environment (migrations at start among them) and from flags reach the relay and its store.
    const { env, table, schema } = freshSchema({
      OUTBOXER_MIGRATE: 'true',
      OUTBOXER_LANES: '2',
      OUTBOXER_PREPARED_STATEMENTS: 'false',
      OUTBOXER_RETRY_JITTER: '0.2',
    });
    const tuning = ['--owner', 'cli-test-relay', '--idempotency-window-ms', '3600000', '--max-in-flight', '32', '--housekeeping-batch-size', '100'];
    // application_name in the URL lets the test find this relay's connections.
    const relay = start(
      ['relay', '--publisher', 'console', '--poll-interval-ms', '50', ...tuning, '--database-url', `${services.postgresUrl}?application_name=${appName}`],
      env,
    );
    await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
    const first = await insert(table, 25);
    await waitUntil(async () => (await countRows(table)) === 0, 'the first rows to be published', relay);

    // Every connection of the relay dies (idle ones included): the pool reports it, the relay carries on.
    await pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [appName]);
    const second = await insert(table, 5);
    await waitUntil(async () => (await countRows(table)) === 0, 'the rows inserted after the connections died', relay);
    await relay.waitForOutput((out) => [...first, ...second].every((id) => out.stdout.includes(`id=${id}`)), 'a console line per message');
    expect(relay.running).toBe(true);

    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    const logs = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const startup = logs.find((line) => line.msg === 'outboxer relay starting');
    expect(startup).toMatchObject({ dialect: 'postgres', publisher: 'console', schema, table: 'outbox', batchSize: 500, pollIntervalMs: 50, version });
    expect(startup).toMatchObject({ owner: 'cli-test-relay', lanes: 2, maxInFlight: 32, housekeepingBatchSize: 100, retry: { jitter: 0.2, maxAttempts: 10 } });
    expect(startup).toMatchObject({ preparedStatements: false, idempotencyWindowMs: 3_600_000, retainPublishedMs: 0 });
    expect(startup?.database).toBe(redactUrl(`${services.postgresUrl}?application_name=${appName}`));
    expect(logs.map((line) => line.msg)).toContain('relay stopped');
    expect(logs.at(-1)?.msg).toBe('outboxer relay exited');
    expect(result.stdout.split('\n').filter((line) => line.startsWith('[outboxer]'))).toHaveLength(30);
  });

  /** A relay whose claim query is stuck behind a table lock the test holds: its graceful stop has to wait. */
  async function blockedRelay() {
    const appName = uniqueName('cli_relay');
    const { env, table } = await migrated();
    const relay = start(['relay', '--poll-interval-ms', '50', '--database-url', `${services.postgresUrl}?application_name=${appName}`], env);
    await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
    const locker = await pool.connect();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    await waitUntil(
      async () => (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [appName])).rowCount === 1,
      'the relay to wait for the lock',
    );
    const unlock = async () => {
      await locker.query('ROLLBACK');
      locker.release();
    };
    return { relay, unlock };
  }

  it('a graceful stop waits for the round in progress to finish', async () => {
    const { relay, unlock } = await blockedRelay();
    try {
      relay.child.kill('SIGTERM');
      await relay.waitForOutput((out) => out.stderr.includes('stop requested'), 'the stop to begin');
      expect(relay.running).toBe(true);
      expect(relay.stderr).not.toContain('relay stopped');
    } finally {
      await unlock();
    }
    const result = await relay.waitForExit();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('relay stopped');
  });

  it('a second signal forces exit 1 without waiting', async () => {
    const { relay, unlock } = await blockedRelay();
    try {
      relay.child.kill('SIGINT');
      await relay.waitForOutput((out) => out.stderr.includes('stop requested'), 'the stop to begin');
      relay.child.kill('SIGINT');
      const result = await relay.waitForExit(10_000);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('second signal: forcing exit');
      expect(result.stderr).not.toContain('relay stopped');
    } finally {
      await unlock();
    }
  });
});

describe('outboxer CLI: relay to real brokers', () => {
  it('--publisher rabbitmq publishes every pending row to the exchange with its id', async () => {
    const { env, table } = await migrated();
    const exchange = uniqueName('ex');
    const prefix = uniqueName('p');
    const connection = await amqp.connect(services.amqpUrl);
    try {
      const channel = await connection.createChannel();
      // Declared as the publisher declares it (durable topic), or the broker refuses its declaration.
      await channel.assertExchange(exchange, 'topic', { durable: true });
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(queue, exchange, `${prefix}.#`);
      const received: string[] = [];
      await channel.consume(
        queue,
        (message) => {
          if (message !== null) received.push(String(message.properties.messageId));
        },
        { noAck: true },
      );
      const ids = await insert(table, 10, `${prefix}.orders`);
      const relay = start(['relay', '--publisher', 'rabbitmq', '--broker-url', services.amqpUrl, '--exchange', exchange, '--poll-interval-ms', '50'], env);
      await waitUntil(async () => received.length >= ids.length && (await countRows(table)) === 0, 'every message at the queue', relay);
      expect([...received].sort()).toEqual([...ids].sort());
      const result = await relay.stop('SIGTERM');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('"exchange":"' + exchange + '"');
      expect(result.stderr).toContain('relay stopped');
      await channel.deleteExchange(exchange);
    } finally {
      await connection.close();
    }
  });

  it('--publisher nats publishes every pending row to JetStream under the subject prefix, with Nats-Msg-Id', async () => {
    const prefix = uniqueName('p');
    const stream = uniqueName('s');
    const { env, table } = await migrated({ OUTBOXER_SUBJECT_PREFIX: prefix });
    const nc = await natsConnect({ servers: services.natsUrl });
    const jsm = await jetstreamManager(nc);
    try {
      await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
      const ids = await insert(table, 10, 'orders.created');
      // The broker URL from the environment, the prefix too; a list of servers is accepted.
      const relay = start(['relay', '--publisher', 'nats', '--broker-url', `${services.natsUrl},${services.natsUrl}`, '--poll-interval-ms', '50'], env);
      await waitUntil(async () => (await jsm.streams.info(stream)).state.messages >= ids.length, 'every message in the stream', relay);
      const stored: string[] = [];
      for (let seq = 1; seq <= ids.length; seq++) {
        const message = await jsm.streams.getMessage(stream, { seq });
        expect(message?.subject).toBe(`${prefix}.orders.created`);
        stored.push(message?.header.get('Nats-Msg-Id') ?? '');
      }
      expect([...stored].sort()).toEqual([...ids].sort());
      await waitUntil(async () => (await countRows(table)) === 0, 'the rows to be marked', relay);
      const result = await relay.stop('SIGTERM');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('relay stopped');
    } finally {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  });
});
