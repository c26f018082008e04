import type { OutboxMessage } from '../../src/core/message.js';
import { Outbox } from '../../src/core/outbox.js';
import type { Publisher } from '../../src/core/ports.js';
import type { BrokerConnectionState } from '../../src/core/relay-health.js';
import type { Relay } from '../../src/core/relay.js';
import type { RelayOptionsInput } from '../../src/core/relay-options.js';
import type { OutboxOperator } from '../../src/core/ports/outbox-operator.js';
import { createOpsServer, type OpsServer, type OpsServerOptions } from '../../src/ops/http/index.js';
import { OutboxerMetrics } from '../../src/ops/metrics/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { v2Timing } from '../support/partition-relay-fixture.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { isolatedExchange } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';

/** Bodies over this many bytes are refused by the relay's publisher until `raiseSizeLimit()`. */
export const SIZE_LIMIT_BYTES = 2048;

/**
 * A RabbitMQ publisher whose operator set `maxMessageBytes` too low: a larger message fails for good (it is
 * parked dead with the real publisher's reason) until the limit is raised, as after a configuration fix.
 * Both sides are real publishers to the real broker; this only picks one per message.
 */
export class SizeLimitedPublisher implements Publisher {
  readonly name = 'rabbitmq';
  readonly capabilities = {};
  limitRaised = false;
  readonly #limited: Publisher;
  readonly #open: Publisher;

  constructor(url: string, exchange: string) {
    const clientName = uniqueName('ox_dash');
    this.#limited = createRabbitMqPublisher({ url, exchange, clientName, maxMessageBytes: SIZE_LIMIT_BYTES });
    this.#open = createRabbitMqPublisher({ url, exchange, clientName, confirmTimeoutMs: 15_000 });
  }

  publish(message: OutboxMessage): Promise<void> {
    const tooLarge = (typeof message.body === 'string' ? Buffer.byteLength(message.body) : message.body.byteLength) > SIZE_LIMIT_BYTES;
    return (tooLarge && !this.limitRaised ? this.#limited : this.#open).publish(message);
  }

  verify(): Promise<void> {
    return this.#open.verify?.() ?? Promise.resolve();
  }

  connectionState(): BrokerConnectionState {
    return this.#open.connectionState?.() ?? 'connecting';
  }

  async close(): Promise<void> {
    await Promise.all([this.#limited.close(), this.#open.close()]);
  }
}

/** What the dashboard shows in the tests and the screenshot: one table, one relay, its ops server. */
export interface DashboardScenario {
  readonly url: string;
  readonly token: string;
  readonly fixture: PostgresFixture;
  readonly outbox: Outbox<SqlExecutor>;
  readonly exchange: Awaited<ReturnType<typeof isolatedExchange>>;
  readonly publisher: SizeLimitedPublisher;
  /** The metrics the ops server serves at /metrics, fed by the scenario's relays and store. */
  readonly metrics: OutboxerMetrics;
  /** The relay the ops server reports (not started: call `relay.start()`). */
  readonly relay: Relay;
  /** Another relay on the same table, with its own publisher, or the one given (started). */
  addRelay(owner?: string, publisher?: Publisher): Relay;
  topic(name: string): string;
  /** Commits `count` messages of `topic` (keys `<topic>#0` to `#15`, with `headers` if given) in one transaction; returns their ids. */
  enqueue(
    topic: string,
    count: number,
    payload?: (i: number) => unknown,
    type?: string,
    headers?: Readonly<Record<string, string>>,
  ): Promise<readonly string[]>;
  /** Another ops server on the same store, without an admin token (read-only). */
  readOnlyServer(): Promise<string>;
  /** Another ops server with the same admin token, and these options (payloads shown, another operator); returns its URL. */
  server(options: Pick<OpsServerOptions, 'exposePayloads'> & { readonly operator?: OutboxOperator }): Promise<string>;
  close(): Promise<void>;
}

/**
 * A fresh schema and exchange, a relay (not started) publishing to RabbitMQ, and an ops server on a free port
 * with an admin token and metrics. `close()` stops and removes all of it.
 */
export async function startDashboardScenario(relayOptions: RelayOptionsInput = {}): Promise<DashboardScenario> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const exchange = await isolatedExchange();
    cleanups.push(() => exchange.cleanup());
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const db = fromPgPool(fixture.pool);
    const metrics = new OutboxerMetrics();
    const options = { ...v2Timing, ...relayOptions, hooks: metrics.relayHooks(relayOptions.hooks) };
    const publisher = new SizeLimitedPublisher(services.amqpUrl, exchange.exchange);
    const relay = outbox.createRelay(publisher, options);
    cleanups.push(() => outbox.close());
    const unobserve = [metrics.observeRelay(relay), metrics.observeStore(fixture.store)];
    cleanups.push(async () => unobserve.forEach((stop) => stop()));
    const token = `dash-${uniqueName('token')}`;
    const server = createOpsServer({ operator: fixture.store, relay, metrics, adminToken: token, port: 0 });
    const servers: OpsServer[] = [server];
    cleanups.push(() => Promise.all(servers.map((s) => s.close())));
    const { url } = await server.listen();
    return {
      url,
      token,
      fixture,
      outbox,
      exchange,
      publisher,
      metrics,
      relay,
      addRelay(owner, publisher = new SizeLimitedPublisher(services.amqpUrl, exchange.exchange)) {
        const other = outbox.createRelay(publisher, owner === undefined ? options : { ...options, owner });
        other.start();
        return other;
      },
      topic: (name) => exchange.topic(name),
      enqueue: (topic, count, payload = (i) => ({ n: i }), type = 'test.event', headers) =>
        outbox.transaction(db, (tx) =>
          outbox.enqueueMany(
            tx,
            Array.from({ length: count }, (_, i) => ({ topic, type, key: `${topic}#${i % 16}`, payload: payload(i), ...(headers && { headers }) })),
          ),
        ),
      async readOnlyServer() {
        const readOnly = createOpsServer({ operator: fixture.store, relay, port: 0 });
        servers.push(readOnly);
        return (await readOnly.listen()).url;
      },
      async server({ exposePayloads, operator = fixture.store }) {
        const other = createOpsServer({ operator, relay, adminToken: token, exposePayloads, port: 0 });
        servers.push(other);
        return (await other.listen()).url;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
