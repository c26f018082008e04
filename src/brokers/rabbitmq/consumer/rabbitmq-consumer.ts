import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { OutboxerError } from '../../../core/errors.js';
import { secretsOfUrl } from '../../../core/redact.js';
import { closeChannelQuietly, closeQuietly, describeDriverError, safeLogger } from '../driver.js';
import { pause, type Delivery, type RunnerContext } from '../../../consumer/delivery-runner.js';
import { type DeliveryDispatch, deliveryDispatch } from '../../../consumer/delivery-batcher.js';
import { resolveRabbitMqConsumerOptions, type RabbitMqConsumerOptions, type ResolvedRabbitMqConsumerOptions } from './options.js';
import { deliverySourceOf, rawDeliveryOf } from './wire.js';

export interface RabbitMqConsumer {
  /** Connects, declares and binds the queue, and starts consuming; rejects if the first connection fails. */
  start(): Promise<void>;
  /** Stops taking deliveries, lets handlers in flight finish and ack (bounded), gives back held ones, closes. */
  stop(): Promise<void>;
  readonly connected: boolean;
}

/** One connection and channel; never repaired: a loss makes a new session. */
interface Session {
  readonly model: ChannelModel;
  readonly channel: Channel;
  readonly abort: AbortController;
  consumerTag: string | undefined;
  dead: boolean;
}

/**
 * Consumes a durable queue bound to the outbox exchange through an inbox: each delivery is acked only
 * after the inbox transaction committed (or found it a duplicate). Messages of one key are handled one after
 * another in delivery order; other keys run side by side, up to `prefetch`.
 */
export function createRabbitMqConsumer<Tx>(input: RabbitMqConsumerOptions<Tx>): RabbitMqConsumer {
  return new AmqpInboxConsumer(resolveRabbitMqConsumerOptions(input));
}

class AmqpInboxConsumer<Tx> implements RabbitMqConsumer {
  readonly #options: ResolvedRabbitMqConsumerOptions<Tx>;
  readonly #log;
  readonly #secrets: string[];
  readonly #stop = new AbortController();
  /** Deliveries being handled, across sessions: `stop()` waits for them. */
  readonly #inFlight = new Set<Promise<void>>();
  readonly #dispatch: DeliveryDispatch<Tx>;
  #session: Session | undefined;
  #reconnecting: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;

  constructor(options: ResolvedRabbitMqConsumerOptions<Tx>) {
    this.#options = options;
    this.#dispatch = deliveryDispatch(options.batching);
    this.#log = safeLogger(options.logger);
    this.#secrets = secretsOfUrl(options.url);
  }

  get connected(): boolean {
    return this.#session !== undefined && !this.#session.dead;
  }

  async start(): Promise<void> {
    if (this.#session !== undefined || this.#stop.signal.aborted) return;
    try {
      this.#session = await this.#open();
    } catch (error) {
      throw new OutboxerError(
        'OUTBOXER_BROKER_UNAVAILABLE',
        `rabbitmq consumer of queue ${this.#options.queue} at ${this.#options.redactedUrl} could not start: ${describeDriverError(error, this.#secrets)}`,
      );
    }
  }

  stop(): Promise<void> {
    this.#stopped ??= this.#shutdown();
    return this.#stopped;
  }

  async #shutdown(): Promise<void> {
    this.#stop.abort();
    await this.#reconnecting;
    const session = this.#session;
    if (session === undefined) return;
    // No handler starts once stop() is called: deliveries that arrive or wait during the cancel's round trip are given
    // back. Aborting after the cancel let those queued behind a key that freed meanwhile start (seen under CI load).
    session.abort.abort();
    if (session.consumerTag !== undefined && !session.dead) await session.channel.cancel(session.consumerTag).catch(() => undefined);
    const drained = Promise.all([...this.#inFlight]).then(() => undefined);
    const patience = new AbortController();
    await Promise.race([drained, pause(this.#options.stopTimeoutMs, patience.signal)]);
    patience.abort(); // clears the timer, which would keep the process alive for the whole stopTimeoutMs
    session.dead = true;
    // The channel first: its close-ok comes after the broker handled every ack sent on it. Closing only the
    // connection lets RabbitMQ drop acks still queued for the channel, and requeue messages already processed.
    await closeChannelQuietly(session.channel, this.#options.connectTimeoutMs);
    await closeQuietly(session.model, this.#options.connectTimeoutMs);
  }

  async #open(): Promise<Session> {
    const o = this.#options;
    const model = await connect(o.url, {
      timeout: o.connectTimeoutMs,
      keepAlive: true,
      keepAliveDelay: 10_000,
      clientProperties: { connection_name: o.clientName },
    });
    try {
      const channel = await model.createChannel();
      const session: Session = { model, channel, abort: new AbortController(), consumerTag: undefined, dead: false };
      const lost = (error?: unknown): void => this.#lost(session, error);
      model.on('error', lost);
      model.on('close', lost);
      channel.on('error', lost);
      channel.on('close', lost);
      model.on('blocked', () => this.#log('warn', { url: o.redactedUrl }, 'rabbitmq blocked the consumer connection (resource alarm)'));
      if (o.declareExchange) await channel.assertExchange(o.exchange, o.exchangeType, { durable: true });
      await channel.assertQueue(o.queue, { durable: true, arguments: { ...o.queueArguments } });
      for (const key of o.bindingKeys) await channel.bindQueue(o.queue, o.exchange, key);
      await channel.prefetch(o.prefetch);
      const { consumerTag } = await channel.consume(o.queue, (delivery) => this.#receive(session, delivery), { noAck: false });
      session.consumerTag = consumerTag;
      this.#log('info', { url: o.redactedUrl, queue: o.queue, prefetch: o.prefetch }, 'rabbitmq consumer started');
      return session;
    } catch (error) {
      await closeQuietly(model, o.connectTimeoutMs);
      throw error;
    }
  }

  #receive(session: Session, delivery: ConsumeMessage | null): void {
    if (delivery === null) {
      this.#lost(session, new Error('the broker cancelled the consumer (queue deleted?)'));
      return;
    }
    const context: RunnerContext<Tx> = {
      inbox: this.#options.inbox,
      handler: this.#options.handler,
      hooks: this.#options.hooks,
      logger: this.#options.logger,
      instrumentation: this.#options.instrumentation,
      errorBackoff: {
        baseDelayMs: this.#options.reconnectDelayMs,
        maxDelayMs: this.#options.maxReconnectDelayMs,
        maxAttempts: Number.MAX_SAFE_INTEGER,
        jitter: 0.5,
      },
      keepAliveMs: undefined,
      stopSignal: session.abort.signal,
    };
    const raw = rawDeliveryOf(delivery);
    const settle = (action: (channel: Channel) => void) => async (): Promise<void> => {
      if (session.dead) return; // the broker requeued it with the channel: the inbox skips the copy
      try {
        action(session.channel);
      } catch (error) {
        this.#lost(session, error);
      }
    };
    const handled: Delivery = {
      raw,
      ...(this.#options.instrumentation === undefined ? {} : { source: deliverySourceOf(delivery, this.#options.queue) }),
      ack: settle((channel) => channel.ack(delivery)),
      dead: settle((channel) => (this.#options.deadLetter === 'ack' ? channel.ack(delivery) : channel.nack(delivery, false, false))),
      release: settle((channel) => channel.nack(delivery, false, true)),
    };
    const run = this.#dispatch(context, handled);
    this.#inFlight.add(run);
    void run.finally(() => this.#inFlight.delete(run));
  }

  #lost(session: Session, error: unknown): void {
    if (session.dead) return;
    session.dead = true;
    session.abort.abort();
    void closeQuietly(session.model, this.#options.connectTimeoutMs);
    if (this.#stop.signal.aborted) return;
    this.#log(
      'warn',
      { url: this.#options.redactedUrl, queue: this.#options.queue, error: error === undefined ? 'closed' : describeDriverError(error, this.#secrets) },
      'rabbitmq consumer lost its connection; reconnecting',
    );
    this.#reconnecting ??= this.#reconnect().finally(() => {
      this.#reconnecting = undefined;
    });
  }

  async #reconnect(): Promise<void> {
    const o = this.#options;
    for (let attempt = 0; !this.#stop.signal.aborted; attempt++) {
      const ceiling = Math.min(o.maxReconnectDelayMs, o.reconnectDelayMs * 2 ** Math.min(attempt, 20));
      await pause(ceiling / 2 + (Math.random() * ceiling) / 2, this.#stop.signal);
      if (this.#stop.signal.aborted) return;
      try {
        this.#session = await this.#open();
        this.#log('info', { url: o.redactedUrl, queue: o.queue }, 'rabbitmq consumer reconnected');
        return;
      } catch (error) {
        this.#log('warn', { url: o.redactedUrl, error: describeDriverError(error, this.#secrets) }, 'rabbitmq consumer could not reconnect; trying again');
      }
    }
  }
}
