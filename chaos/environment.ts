import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { AckPolicy } from '@nats-io/jetstream';
import pg from 'pg';
import { fromPgPool } from '../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../src/stores/postgres/postgres-store.js';
import { natsAdmin, PrivateNatsServer } from '../test/support/nats-harness.js';
import { TcpProxy } from '../test/support/tcp-proxy.js';
import { brokerUrlEnv, type BrokerKind, DEFAULT_DESTINATION, type DestinationSpec, type DestinationWiring, ENV_BROKER_URL } from './spec.js';

const run = promisify(execFile);
export const SERVICES = Object.freeze({
  pgHost: '127.0.0.1',
  pgPort: 5432,
  pgDatabase: 'test',
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
  /**
   * Fan-out: the named destinations (not `default`), each with broker resources of its own and a TCP proxy of its
   * own that every relay reaches it through (a schedule cuts one destination alone there). Empty without fan-out.
   */
  readonly destinations: readonly EnvironmentDestination[];
  /** Where each destination's messages go, `default` first: the consumer reads them all. */
  readonly wiring: readonly DestinationWiring[];
  /** Broker URLs by environment variable: for the relays (through the proxies; `ownBrokerPort`: the default broker's own proxy of a slot) or the consumer (direct). */
  brokerSecrets(side: 'relay' | 'consumer', ownBrokerPort?: number): Record<string, string>;
  /** Gives the late topics a destination: binds them to the queue (RabbitMQ) or adds them to the stream (NATS). */
  createLateTopology(): Promise<void>;
  destroy(): Promise<void>;
}

/** A named fan-out destination of a scenario, as the environment made it. */
export interface EnvironmentDestination {
  readonly spec: DestinationSpec;
  readonly wiring: DestinationWiring;
  /** Every relay reaches this destination's broker through it (and only this destination's). */
  readonly proxy: TcpProxy;
  /** The broker URL for the relays (through `proxy`) and for the consumer (direct). */
  readonly relayUrl: string;
  readonly consumerUrl: string;
}

export async function createEnvironment(name: string, broker: BrokerKind, keys: number, fanOut: readonly DestinationSpec[] = []): Promise<Environment> {
  const canary = `cnry${randomBytes(12).toString('hex')}`;
  const tag = `${name.replace(/[^a-z0-9]/gi, '_')}_${randomBytes(3).toString('hex')}`.toLowerCase();
  const schema = `chaos_${tag}`;
  const admin = new pg.Pool({
    host: SERVICES.pgHost,
    port: SERVICES.pgPort,
    database: SERVICES.pgDatabase,
    user: 'postgres',
    max: 2,
    application_name: `chaos-admin-${tag}`,
  });
  admin.on('error', () => undefined);
  await new PostgresOutboxStore(fromPgPool(admin), { schema }).migrate();
  await admin.query(`CREATE TABLE "${schema}".aggregates (key text PRIMARY KEY, version int NOT NULL)`);
  // one row per outbox row: with fan-out, a message has one per destination (each its own id)
  await admin.query(
    `CREATE TABLE "${schema}".ledger (id uuid PRIMARY KEY, key text NOT NULL, version int NOT NULL, kind text NOT NULL, destination text NOT NULL DEFAULT '${DEFAULT_DESTINATION}')`,
  );
  await admin.query(`INSERT INTO "${schema}".aggregates SELECT 'k' || g, 0 FROM generate_series(0, $1::int - 1) g`, [keys]);
  const pgProxy = await TcpProxy.start(SERVICES.pgPort, SERVICES.pgHost);
  const topicPrefix = `c_${tag}`;
  const lateTopicPrefix = `${topicPrefix}_late`;
  const exchange = `chaos_ex_${tag}`;
  const queue = `chaos_q_${tag}`;
  const user = `chaos_${tag}`;
  let nats: PrivateNatsServer | undefined;
  const privateNats = async (): Promise<PrivateNatsServer> => {
    if (nats === undefined) {
      nats = await PrivateNatsServer.create({ user: 'chaos', pass: canary });
      await nats.start();
    }
    return nats;
  };
  const rabbitUrl = (port: number) => `amqp://${user}:${canary}@127.0.0.1:${port}`;
  const natsUrl = (port: number) => `nats://chaos:${canary}@127.0.0.1:${port}`;
  const rabbitExchanges: { exchange: string; queue: string }[] = [];
  if (broker === 'rabbitmq' || fanOut.some((d) => d.broker === 'rabbitmq')) {
    await run('rabbitmqctl', ['add_user', user, canary]);
    await run('rabbitmqctl', ['set_permissions', '-p', '/', user, '.*', '.*', '.*']);
  }
  /** An exchange with a durable queue bound to every topic of the scenario. */
  const rabbitResources = async (ex: string, q: string): Promise<void> => {
    const connection = await amqp.connect(SERVICES.amqpAdminUrl);
    try {
      const channel = await connection.createChannel();
      await channel.assertExchange(ex, 'topic', { durable: true });
      await channel.assertQueue(q, { durable: true });
      await channel.bindQueue(q, ex, `${topicPrefix}.#`);
    } finally {
      await connection.close().catch(() => undefined);
    }
    rabbitExchanges.push({ exchange: ex, queue: q });
  };
  /** A stream capturing `subjects`, with the durable consumer `chaos`. */
  const natsStream = async (stream: string, subjects: string): Promise<PrivateNatsServer> => {
    const server = await privateNats();
    const nadmin = await natsAdmin(server.adminOptions());
    try {
      await nadmin.jsm.streams.add({ name: stream, subjects: [subjects] });
      await nadmin.jsm.consumers.add(stream, { durable_name: 'chaos', ack_policy: AckPolicy.Explicit });
    } finally {
      await nadmin.close();
    }
    return server;
  };
  let brokerProxy: TcpProxy;
  let brokerUrl: (port: number) => string;
  let consumerBroker: string;
  if (broker === 'rabbitmq') {
    await rabbitResources(exchange, queue);
    brokerProxy = await TcpProxy.start(SERVICES.amqpPort);
    brokerUrl = rabbitUrl;
    consumerBroker = brokerUrl(SERVICES.amqpPort);
  } else {
    const server = await natsStream(queue, `${topicPrefix}.>`);
    brokerProxy = await TcpProxy.start(server.port);
    brokerUrl = natsUrl;
    consumerBroker = brokerUrl(server.port);
  }
  const destinations: EnvironmentDestination[] = [];
  for (const spec of fanOut) {
    if (spec.name === DEFAULT_DESTINATION) throw new Error(`fan-out destination ${DEFAULT_DESTINATION} is the scenario's own broker: name the others`);
    const own = spec.name.replace(/[^a-z0-9]/gi, '_').toLowerCase();
    const wiring: DestinationWiring =
      spec.broker === 'rabbitmq'
        ? { name: spec.name, broker: spec.broker, exchange: `${exchange}_${own}`, queue: `${queue}_${own}`, durable: 'chaos', urlEnv: brokerUrlEnv(spec.name) }
        : { name: spec.name, broker: spec.broker, exchange, subjectPrefix: own, queue: `${queue}_${own}`, durable: 'chaos', urlEnv: brokerUrlEnv(spec.name) };
    let port: number;
    if (spec.broker === 'rabbitmq') {
      await rabbitResources(wiring.exchange, wiring.queue);
      port = SERVICES.amqpPort;
    } else {
      port = (await natsStream(wiring.queue, `${own}.${topicPrefix}.>`)).port;
    }
    const proxy = await TcpProxy.start(port);
    const url = spec.broker === 'rabbitmq' ? rabbitUrl : natsUrl;
    destinations.push({ spec, wiring, proxy, relayUrl: url(proxy.port), consumerUrl: url(port) });
  }
  const defaultWiring: DestinationWiring = { name: DEFAULT_DESTINATION, broker, exchange, queue, durable: 'chaos', urlEnv: ENV_BROKER_URL };
  const pgUrl = (port: number) => `postgres://postgres:${canary}@${SERVICES.pgHost}:${port}/${SERVICES.pgDatabase}`;
  return {
    name,
    canary,
    schema,
    admin,
    broker,
    exchange,
    queue,
    durable: 'chaos',
    topicPrefix,
    lateTopicPrefix,
    pgProxy,
    brokerProxy,
    nats,
    urls: { relayPg: pgUrl(pgProxy.port), directPg: pgUrl(SERVICES.pgPort), relayBroker: brokerUrl(brokerProxy.port), consumerBroker },
    relayPgVia: pgUrl,
    relayBrokerVia: brokerUrl,
    destinations,
    wiring: [defaultWiring, ...destinations.map((d) => d.wiring)],
    brokerSecrets(side, ownBrokerPort) {
      const own = side === 'consumer' ? consumerBroker : brokerUrl(ownBrokerPort ?? brokerProxy.port);
      return Object.fromEntries([
        [ENV_BROKER_URL, own],
        ...destinations.map((d): [string, string] => [d.wiring.urlEnv, side === 'relay' ? d.relayUrl : d.consumerUrl]),
      ]);
    },
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
      await Promise.all(destinations.map((d) => d.proxy.close()));
      if (rabbitExchanges.length > 0) {
        const connection = await amqp.connect(SERVICES.amqpAdminUrl);
        const channel = await connection.createChannel();
        for (const made of rabbitExchanges) {
          await channel.deleteQueue(made.queue).catch(() => undefined);
          await channel.deleteExchange(made.exchange).catch(() => undefined);
        }
        await connection.close().catch(() => undefined);
        await run('rabbitmqctl', ['delete_user', user]).catch(() => undefined);
      }
      await nats?.destroy();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}
