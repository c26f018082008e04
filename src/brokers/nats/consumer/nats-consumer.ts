import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerConfig, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { OutboxerError } from '../../../core/errors.js';
import { driverMessage } from '../errors.js';
import { RECONNECT_TIME_WAIT_MS } from '../live-connection.js';
import { pause, type Delivery, type RunnerContext } from '../../../consumer/delivery-runner.js';
import { type DeliveryDispatch, deliveryDispatch } from '../../../consumer/delivery-batcher.js';
import { resolveNatsConsumerOptions, type NatsConsumerOptions, type ResolvedNatsConsumerOptions } from './options.js';
import { deliverySourceOf, rawDeliveryOf } from './wire.js';

export interface NatsConsumer {
  /** Connects, creates or updates the durable consumer, and starts pulling; rejects if that fails. */
  start(): Promise<void>;
  /** Stops pulling, lets handlers in flight finish and ack (bounded), naks held ones, closes. */
  stop(): Promise<void>;
}

/**
 * Consumes a JetStream durable pull consumer through an inbox: ack only after the inbox committed,
 * `term()` for dead messages, `working()` while a message is handled or waits for its retry, so `ack_wait`
 * does not hand it to another instance. Messages of one key run one after another in stream order.
 */
export function createNatsConsumer<Tx>(input: NatsConsumerOptions<Tx>): NatsConsumer {
  return new JetStreamInboxConsumer(resolveNatsConsumerOptions(input));
}

class JetStreamInboxConsumer<Tx> implements NatsConsumer {
  readonly #o: ResolvedNatsConsumerOptions<Tx>;
  readonly #stop = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #dispatch: DeliveryDispatch<Tx>;
  readonly #where: string;
  #nc: NatsConnection | undefined;
  #messages: ConsumerMessages | undefined;
  #pulling: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  /** nats-server before 2.10.4 ignores a `+TERM` that carries a reason (the message would come back). */
  #termTakesReason = false;

  constructor(options: ResolvedNatsConsumerOptions<Tx>) {
    this.#o = options;
    this.#dispatch = deliveryDispatch(options.batching);
    this.#where = options.connection.servers.map((server) => server.redacted).join(', ');
  }

  async start(): Promise<void> {
    if (this.#nc !== undefined || this.#stop.signal.aborted) return;
    const { connection } = this.#o;
    try {
      this.#nc = await connect({
        servers: connection.servers.map((server) => server.hostPort),
        name: connection.name,
        timeout: connection.connectTimeoutMs,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: RECONNECT_TIME_WAIT_MS,
        reconnectJitter: 250,
        ...connection.auth,
        ...(connection.tls ? { tls: {} } : {}),
      });
      this.#termTakesReason = versionAtLeast(this.#nc.info?.version, [2, 10, 4]);
      if (this.#o.manageConsumer) await this.#ensureConsumer(this.#nc);
      const consumer = await jetstream(this.#nc).consumers.get(this.#o.stream, this.#o.durable);
      this.#messages = await consumer.consume({ max_messages: this.#o.maxAckPending });
    } catch (error) {
      await this.#nc?.close().catch(() => undefined);
      this.#nc = undefined;
      throw new OutboxerError(
        'OUTBOXER_BROKER_UNAVAILABLE',
        `nats consumer ${this.#o.durable} on stream ${this.#o.stream} at ${this.#where} could not start: ${driverMessage(error, connection.secrets)}`,
      );
    }
    const messages = this.#messages;
    this.#pulling = (async () => {
      for await (const message of messages) this.#receive(message);
    })().catch((error: unknown) =>
      this.#o.logger.error(
        { servers: this.#where, durable: this.#o.durable, error: driverMessage(error, connection.secrets) },
        'nats consumer stopped pulling',
      ),
    );
    this.#o.logger.info({ servers: this.#where, stream: this.#o.stream, durable: this.#o.durable }, 'nats consumer started');
  }

  stop(): Promise<void> {
    this.#stopped ??= this.#shutdown();
    return this.#stopped;
  }

  async #shutdown(): Promise<void> {
    await this.#messages?.close().catch(() => undefined);
    this.#stop.abort();
    const drained = Promise.all([...this.#inFlight]).then(() => undefined);
    const patience = new AbortController();
    await Promise.race([drained, pause(this.#o.stopTimeoutMs, patience.signal)]);
    patience.abort(); // clears the timer, which would keep the process alive for the whole stopTimeoutMs
    await this.#pulling;
    if (this.#nc !== undefined && !this.#nc.isClosed()) {
      await this.#nc.flush().catch(() => undefined); // the last acks reach the server before the close
      await this.#nc.close().catch(() => undefined);
    }
  }

  async #ensureConsumer(nc: NatsConnection): Promise<void> {
    const jsm = await jetstreamManager(nc);
    const settings: Partial<ConsumerConfig> = {
      ack_wait: nanos(this.#o.ackWaitMs),
      max_deliver: this.#o.maxDeliver,
      max_ack_pending: this.#o.maxAckPending,
      ...(this.#o.filterSubject === undefined ? {} : { filter_subject: this.#o.filterSubject }),
    };
    const exists = await jsm.consumers.info(this.#o.stream, this.#o.durable).then(
      () => true,
      () => false,
    );
    if (exists) await jsm.consumers.update(this.#o.stream, this.#o.durable, settings);
    else
      await jsm.consumers.add(this.#o.stream, {
        ...settings,
        durable_name: this.#o.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
      });
  }

  #receive(message: JsMsg): void {
    const context: RunnerContext<Tx> = {
      inbox: this.#o.inbox,
      handler: this.#o.handler,
      hooks: this.#o.hooks,
      logger: this.#o.logger,
      instrumentation: this.#o.instrumentation,
      errorBackoff: { baseDelayMs: 500, maxDelayMs: Math.max(500, Math.floor(this.#o.ackWaitMs / 2)), maxAttempts: Number.MAX_SAFE_INTEGER, jitter: 0.5 },
      keepAliveMs: Math.max(250, Math.floor(this.#o.ackWaitMs / 3)),
      stopSignal: this.#stop.signal,
    };
    const raw = rawDeliveryOf(message, this.#o.subjectPrefix);
    const safely = (action: () => void) => async (): Promise<void> => {
      try {
        action();
      } catch (error) {
        // a closed connection: JetStream redelivers after ack_wait and the inbox skips what was committed
        this.#o.logger.warn({ durable: this.#o.durable, error: driverMessage(error, this.#o.connection.secrets) }, 'nats consumer could not settle a message');
      }
    };
    const delivery: Delivery = {
      raw,
      ...(this.#o.instrumentation === undefined ? {} : { source: deliverySourceOf(message, this.#o.durable) }),
      ack: safely(() => message.ack()),
      dead: safely(() => (this.#termTakesReason ? message.term(reasonFor(raw.id)) : message.term())),
      release: safely(() => message.nak()),
      keepAlive: () => void safely(() => message.working())(),
    };
    const run = this.#dispatch(context, delivery);
    this.#inFlight.add(run);
    void run.finally(() => this.#inFlight.delete(run));
  }
}

function versionAtLeast(version: string | undefined, wanted: readonly [number, number, number]): boolean {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/
    .exec(version ?? '')
    ?.slice(1)
    .map(Number);
  if (parts === undefined) return false;
  for (let i = 0; i < 3; i++) {
    const have = parts[i] ?? 0;
    const want = wanted[i] ?? 0;
    if (have !== want) return have > want;
  }
  return true;
}

function reasonFor(id: string | undefined): string {
  return `outboxer inbox: message ${id ?? '(no id)'} is dead; see the inbox table`;
}
