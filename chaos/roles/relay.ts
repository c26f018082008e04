/**
 * Relay role: the library's Relay over PostgreSQL and a real broker, with decorators around our own
 * ports that journal claims, sends, confirms and marks, inject transient failures, and SIGKILL the
 * process at a named point. Logs go to stderr unscrubbed (the harness greps them for the canary).
 */
import pg from 'pg';
import { createJsonLogger } from '../../src/core/logger.js';
import type { DestinationInput } from '../../src/core/destinations.js';
import type { Publisher } from '../../src/core/ports.js';
import { Relay } from '../../src/core/relay.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { safePoolConfig } from '../../src/stores/postgres/pool.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { Journal } from '../journal.js';
import { type BrokerKind, ENV_BROKER_URL, ENV_PG_URL, readRoleConfig, type RelayConfig, requireEnv } from '../spec.js';
import { faultingPublisher } from './faulting-publisher.js';
import { faultingStore } from './faulting-store.js';

process.on('uncaughtException', (error) => {
  console.error('chaos relay: uncaught exception', error);
  process.exit(70);
});
process.on('unhandledRejection', (error) => {
  console.error('chaos relay: unhandled rejection', error);
  process.exit(70);
});

const config = readRoleConfig<RelayConfig>('relay');
const spec = config.relay;
const journal = new Journal(config.journal);
journal.write({ e: 'start', pid: process.pid, incarnation: config.incarnation });
const logger = createJsonLogger('debug');
const pool = new pg.Pool(
  safePoolConfig({
    connectionString: requireEnv(ENV_PG_URL),
    max: 3,
    queryTimeoutMs: spec.queryTimeoutMs,
    connectTimeoutMs: 2000,
    applicationName: config.applicationName,
  }),
);
pool.on('error', (error) => logger.warn({ error: String(error) }, 'idle database connection failed'));
/** The real publisher of one destination (the relay's own: `default`). */
function realPublisher(broker: BrokerKind, url: string, exchange: string, subjectPrefix: string | undefined, name: string): Publisher {
  return broker === 'rabbitmq'
    ? createRabbitMqPublisher({
        url,
        exchange,
        confirmTimeoutMs: spec.publishTimeoutMs,
        connectTimeoutMs: 2000,
        heartbeatSeconds: 2,
        maxMessageBytes: spec.maxMessageBytes,
        logger,
        clientName: name,
      })
    : createNatsPublisher({
        servers: url,
        ...(subjectPrefix === undefined ? {} : { subjectPrefix }),
        publishTimeoutMs: spec.publishTimeoutMs,
        connectTimeoutMs: 2000,
        maxMessageBytes: spec.maxMessageBytes,
        logger,
        name,
      });
}
const inner = realPublisher(config.broker, requireEnv(ENV_BROKER_URL), config.exchange, undefined, config.applicationName);
const tokens = new Map<string, string>();
const plan = { point: config.killPoint?.point, at: config.killPoint?.at ?? 0 };
const store = faultingStore(new PostgresOutboxStore(fromPgPool(pool, { ownsPool: true }), { schema: config.schema }), journal, tokens, plan);
const publisher = faultingPublisher(inner, journal, tokens, plan);
// fan-out: each named destination's publisher, journaled like the relay's own (a send is a send, wherever it goes)
const destinations: Record<string, DestinationInput> = Object.fromEntries(
  (config.destinations ?? []).map((d) => [
    d.name,
    {
      publisher: faultingPublisher(
        realPublisher(d.broker, requireEnv(d.urlEnv), d.exchange, d.subjectPrefix, `${config.applicationName}-${d.name}`),
        journal,
        tokens,
        plan,
      ),
    },
  ]),
);
const relay = new Relay(store, publisher, {
  ...(config.destinations === undefined ? {} : { destinations }),
  ...(spec.engine === undefined ? {} : { engine: spec.engine }),
  owner: `${config.applicationName}/${process.pid}`,
  batchSize: spec.batchSize,
  lanes: spec.lanes,
  maxInFlight: spec.maxInFlight,
  leaseMs: spec.leaseMs,
  publishTimeoutMs: spec.publishTimeoutMs,
  pollIntervalMs: spec.pollIntervalMs,
  maxPollIntervalMs: spec.maxPollIntervalMs,
  errorBackoffMs: spec.errorBackoffMs,
  maxErrorBackoffMs: spec.maxErrorBackoffMs,
  retry: { baseDelayMs: spec.retryBaseMs, maxDelayMs: spec.retryMaxMs, maxAttempts: spec.maxAttempts },
  logger,
  hooks: {
    onFenced: (event) => journal.write({ e: 'fenced', ...event }),
    onError: (event) => logger.warn({ ...event }, 'relay hook: error'),
    onDead: (event) => journal.write({ e: 'dead', id: event.id }),
    onTopicPaused: (event) => journal.write({ e: 'topic-paused', topic: event.topic, destination: event.destination }),
    onTopicResumed: (event) => journal.write({ e: 'topic-resumed', topic: event.topic, pausedMs: event.pausedMs, destination: event.destination }),
  },
});

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  journal.write({ e: 'sigterm' });
  void (async () => {
    await relay.stop();
    await publisher.close();
    await Promise.all(Object.values(destinations).map((d) => d.publisher.close()));
    await store.close();
    journal.write({ e: 'stopped' });
    process.exit(0);
  })();
});

relay.start();
journal.write({ e: 'running' });
