import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { AckPolicy } from '@nats-io/jetstream';
import pg from 'pg';
import { fromPgPool } from '../src/stores/postgres/database.js';
import { leaseTables } from '../src/stores/postgres/leases/lease-tables.js';
import { PostgresOutboxStore } from '../src/stores/postgres/postgres-store.js';
import { natsAdmin, PrivateNatsServer } from '../test/support/nats-harness.js';
import { TcpProxy } from '../test/support/tcp-proxy.js';
import type { BrokerKind, RelayEngine } from './spec.js';

const run = promisify(execFile);
export const SERVICES = Object.freeze({
  pgHost: '127.0.0.1', pgPort: 5432, pgDatabase: 'test',
  amqpAdminUrl: process.env.OUTBOXER_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  amqpPort: 5672,
});

/**
 * Everything one scenario owns: a schema (outbox, aggregates, ledger), broker resources of its own,
 * a canary password in every connection string, and TCP proxies between the relays and the services.
 */
export interface Environment {
  readonly name: string;
  readonly canary: string;
  readonly schema: string;
  readonly admin: pg.Pool;
  readonly broker: BrokerKind;
  readonly exchange: string;
  readonly queue: string;
  readonly durable: string;
  readonly topicPrefix: string;
  /** Topics `<lateTopicPrefix>.<key>` have no destination until `createLateTopology()`. */
  readonly lateTopicPrefix: string;
  readonly pgProxy: TcpProxy;
  readonly brokerProxy: TcpProxy;
  readonly nats: PrivateNatsServer | undefined;
  /** Connection strings: relays through the proxies, writers and consumer direct. */
  readonly urls: { readonly relayPg: string; readonly directPg: string; readonly relayBroker: string; readonly consumerBroker: string };
  /** The relays' connection string to PostgreSQL through another proxy on `port` (a relay's own). */
  relayPgVia(port: number): string;
  /** The relays' connection string to the broker through another proxy on `port` (a relay's own). */
  relayBrokerVia(port: number): string;
  /** Gives the late topics a destination: binds them to the queue (RabbitMQ) or adds them to the stream (NATS). */
  createLateTopology(): Promise<void>;
  destroy(): Promise<void>;
}

export async function createEnvironment(name: string, broker: BrokerKind, keys: number): Promise<Environment> {
  const canary = `cnry${randomBytes(12).toString('hex')}`;
  const tag = `${name.replace(/[^a-z0-9]/gi, '_')}_${randomBytes(3).toString('hex')}`.toLowerCase();
  const schema = `chaos_${tag}`;
  const admin = new pg.Pool({ host: SERVICES.pgHost, port: SERVICES.pgPort, database: SERVICES.pgDatabase, user: 'postgres', max: 2, application_name: `chaos-admin-${tag}` });
  admin.on('error', () => undefined);
  await new PostgresOutboxStore(fromPgPool(admin), { schema }).migrate();
  await admin.query(`CREATE TABLE "${schema}".aggregates (key text PRIMARY KEY, version int NOT NULL)`);
  await admin.query(`CREATE TABLE "${schema}".ledger (id uuid PRIMARY KEY, key text NOT NULL, version int NOT NULL, kind text NOT NULL)`);
  await admin.query(`INSERT INTO "${schema}".aggregates SELECT 'k' || g, 0 FROM generate_series(0, $1::int - 1) g`, [keys]);
  const pgProxy = await TcpProxy.start(SERVICES.pgPort, SERVICES.pgHost);
  const topicPrefix = `c_${tag}`;
  const lateTopicPrefix = `${topicPrefix}_late`;
  const exchange = `chaos_ex_${tag}`;
  const queue = `chaos_q_${tag}`;
  const user = `chaos_${tag}`;
  let nats: PrivateNatsServer | undefined;
  let brokerProxy: TcpProxy;
  let brokerUrl: (port: number) => string;
  let consumerBroker: string;
  if (broker === 'rabbitmq') {
    await run('rabbitmqctl', ['add_user', user, canary]);
    await run('rabbitmqctl', ['set_permissions', '-p', '/', user, '.*', '.*', '.*']);
    const connection = await amqp.connect(SERVICES.amqpAdminUrl);
    const channel = await connection.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    await channel.assertQueue(queue, { durable: true });
    await channel.bindQueue(queue, exchange, `${topicPrefix}.#`);
    await connection.close();
    brokerProxy = await TcpProxy.start(SERVICES.amqpPort);
    brokerUrl = (port) => `amqp://${user}:${canary}@127.0.0.1:${port}`;
    consumerBroker = brokerUrl(SERVICES.amqpPort);
  } else {
    nats = await PrivateNatsServer.create({ user: 'chaos', pass: canary });
    await nats.start();
    const nadmin = await natsAdmin(nats.adminOptions());
    await nadmin.jsm.streams.add({ name: queue, subjects: [`${topicPrefix}.>`] });
    await nadmin.jsm.consumers.add(queue, { durable_name: 'chaos', ack_policy: AckPolicy.Explicit });
    await nadmin.close();
    brokerProxy = await TcpProxy.start(nats.port);
    brokerUrl = (port) => `nats://chaos:${canary}@127.0.0.1:${port}`;
    consumerBroker = brokerUrl(nats.port);
  }
  const pgUrl = (port: number) => `postgres://postgres:${canary}@${SERVICES.pgHost}:${port}/${SERVICES.pgDatabase}`;
  return {
    name, canary, schema, admin, broker, exchange, queue, durable: 'chaos', topicPrefix,
    lateTopicPrefix,
    pgProxy, brokerProxy, nats,
    urls: { relayPg: pgUrl(pgProxy.port), directPg: pgUrl(SERVICES.pgPort), relayBroker: brokerUrl(brokerProxy.port), consumerBroker },
    relayPgVia: pgUrl,
    relayBrokerVia: brokerUrl,
    async createLateTopology() {
      if (broker === 'rabbitmq') {
        const connection = await amqp.connect(SERVICES.amqpAdminUrl);
        try {
          const channel = await connection.createChannel();
          await channel.bindQueue(queue, exchange, `${lateTopicPrefix}.#`);
        } finally {
          await connection.close().catch(() => undefined);
        }
        return;
      }
      const nadmin = await natsAdmin((nats as PrivateNatsServer).adminOptions());
      try {
        const info = await nadmin.jsm.streams.info(queue);
        await nadmin.jsm.streams.update(queue, { subjects: [...(info.config.subjects ?? []), `${lateTopicPrefix}.>`] });
      } finally {
        await nadmin.close();
      }
    },
    async destroy() {
      await pgProxy.close();
      await brokerProxy.close();
      if (broker === 'rabbitmq') {
        const connection = await amqp.connect(SERVICES.amqpAdminUrl);
        const channel = await connection.createChannel();
        await channel.deleteQueue(queue).catch(() => undefined);
        await channel.deleteExchange(exchange).catch(() => undefined);
        await connection.close().catch(() => undefined);
        await run('rabbitmqctl', ['delete_user', user]).catch(() => undefined);
      }
      await nats?.destroy();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

/**
 * Puts the scenario's table on `engine` before any relay starts. A table `migrate` creates runs v2 with its fence
 * in the past (`-infinity`), so v2 relays are granted partitions at once.
 */
export async function useEngine(env: Pick<Environment, 'schema' | 'admin'>, engine: RelayEngine): Promise<void> {
  const name = { schema: env.schema, table: 'outbox' };
  await env.admin.query(`UPDATE ${leaseTables(name).partitioning} SET engine = '${engine}', fence_until = '-infinity'`);
}
