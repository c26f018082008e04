import { connect, type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import { secretsOfUrl } from '../../core/redact.js';
import { closeQuietly, describeDriverError, LinkOpenError, replyCodeOf, safeLogger } from './driver.js';
import type { ResolvedRabbitMqPublisherOptions } from './options.js';
import { writeCoalescer } from './write-coalescer.js';

/** Why a link stopped working. `reason` is already scrubbed of secrets. */
export interface LinkFailure {
  /** The whole connection died, or the broker closed the channel (the connection is then closed too). */
  readonly scope: 'connection' | 'channel';
  readonly reason: string;
  /** AMQP reply code when the broker closed it (320 CONNECTION_FORCED, 404 NOT_FOUND, 406 PRECONDITION_FAILED). */
  readonly replyCode: number | undefined;
}

export interface LinkHooks<T extends { readonly message: { readonly id: string } }> {
  /** Called once, synchronously, when the link dies: every publish in flight on it must be failed. */
  lost(link: Link<T>, failure: LinkFailure): void;
  /** A `basic.return` (mandatory publish that no queue took); it arrives before that message's ack. */
  returned(link: Link<T>, message: Message): void;
}

/**
 * One connection with one confirm channel. A link is never repaired: when either side dies, the link is
 * dead for good, its publishes fail at once, and the next publish opens a new link.
 */
export class Link<T extends { readonly message: { readonly id: string } }> {
  dead = false;
  /** `publish` returned false: wait for 'drain' before sending more. */
  needsDrain = false;
  /** Publishes sent on this link and not yet settled, and the same by message id (to match returns). */
  readonly inFlight = new Set<T>();
  readonly #byMessageId = new Map<string, T[]>();
  readonly #drainWaiters = new Set<() => void>();
  readonly #hooks: LinkHooks<T>;
  readonly #closeTimeoutMs: number;
  #disposed: Promise<void> | undefined;
  /** Call before each publish: what one turn of the event loop publishes leaves in one socket write (`writeCoalescer`). */
  readonly coalesceWrites: () => void;

  constructor(
    readonly model: ChannelModel,
    readonly channel: ConfirmChannel,
    hooks: LinkHooks<T>,
    closeTimeoutMs: number,
  ) {
    this.#hooks = hooks;
    this.#closeTimeoutMs = closeTimeoutMs;
    this.coalesceWrites = writeCoalescer(model);
  }

  /** Marks the link dead (first failure wins), fails what is in flight, and closes the connection. */
  fail(failure: LinkFailure): void {
    if (this.dead) return;
    this.dead = true;
    this.#wakeAll();
    this.#hooks.lost(this, failure);
    void this.dispose();
  }

  track(item: T): void {
    this.inFlight.add(item);
    const sameId = this.#byMessageId.get(item.message.id);
    if (sameId === undefined) this.#byMessageId.set(item.message.id, [item]);
    else sameId.push(item);
  }

  untrack(item: T): void {
    this.inFlight.delete(item);
    const sameId = this.#byMessageId.get(item.message.id) ?? [];
    const index = sameId.indexOf(item);
    if (index >= 0) sameId.splice(index, 1);
    if (sameId.length === 0) this.#byMessageId.delete(item.message.id);
  }

  /** The oldest unsettled publish of this message id: returns come in publish order. */
  oldestInFlight(messageId: string): T | undefined {
    return this.#byMessageId.get(messageId)?.[0];
  }

  returned(message: Message): void {
    if (!this.dead) this.#hooks.returned(this, message);
  }

  drained(): void {
    this.needsDrain = false;
    this.#wakeAll();
  }

  /** Calls `wake` on the next 'drain' or when the link dies; returns the unsubscribe. */
  onDrainOrDeath(wake: () => void): () => void {
    if (this.dead || !this.needsDrain) {
      wake();
      return () => undefined;
    }
    this.#drainWaiters.add(wake);
    return () => this.#drainWaiters.delete(wake);
  }

  /** A deliberate close (publisher closing): closes the channel and connection, bounded in time. */
  retire(): Promise<void> {
    this.dead = true;
    this.#wakeAll();
    return this.dispose();
  }

  dispose(): Promise<void> {
    this.#disposed ??= closeQuietly(this.model, this.#closeTimeoutMs);
    return this.#disposed;
  }

  #wakeAll(): void {
    const waiters = [...this.#drainWaiters];
    this.#drainWaiters.clear();
    for (const wake of waiters) wake();
  }
}

/**
 * Opens a link: connection, confirm channel, exchange declaration, all within `connectTimeoutMs`.
 * A connection that completes after the deadline is closed at once. Rejects with LinkOpenError.
 */
export async function openLink<T extends { readonly message: { readonly id: string } }>(
  options: ResolvedRabbitMqPublisherOptions,
  hooks: LinkHooks<T>,
): Promise<Link<T>> {
  let abandoned = false;
  const attempt = establish(options, hooks);
  attempt.then(
    (link) => (abandoned ? void link.retire() : undefined),
    () => undefined,
  );
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abandoned = true;
      reject(new LinkOpenError('timeout', `no connection within connectTimeoutMs (${options.connectTimeoutMs} ms)`));
    }, options.connectTimeoutMs);
  });
  try {
    return await Promise.race([attempt, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function establish<T extends { readonly message: { readonly id: string } }>(
  options: ResolvedRabbitMqPublisherOptions,
  hooks: LinkHooks<T>,
): Promise<Link<T>> {
  const secrets = secretsOfUrl(options.url);
  const describe = (error: unknown): string => describeDriverError(error, secrets);
  const log = safeLogger(options.logger);
  const watch: { link: Link<T> | undefined; closed: boolean; reason: string | undefined } = { link: undefined, closed: false, reason: undefined };
  let stage: LinkOpenError['stage'] = 'connect';
  let model: ChannelModel | undefined;
  try {
    model = await connect(options.url, {
      timeout: options.connectTimeoutMs,
      noDelay: true,
      keepAlive: true,
      keepAliveDelay: 10_000,
      clientProperties: { connection_name: options.clientName },
    });
    const connectionDied = (error: unknown): void => {
      watch.closed = true;
      watch.reason ??= error === undefined ? 'connection closed' : describe(error);
      watch.link?.fail({ scope: 'connection', reason: watch.reason, replyCode: replyCodeOf(error) });
    };
    model.on('error', connectionDied);
    model.on('close', connectionDied);
    model.on('blocked', (reason: unknown) =>
      log('warn', { url: options.redactedUrl, reason: String(reason) }, 'rabbitmq blocked the connection (resource alarm); publishes wait and may time out'),
    );
    model.on('unblocked', () => log('info', { url: options.redactedUrl }, 'rabbitmq unblocked the connection'));
    model.on('handler-error', (error: unknown) => log('error', { error: describe(error) }, 'rabbitmq publisher connection handler failed'));

    stage = 'channel';
    const channel = await model.createConfirmChannel();
    let channelReason: string | undefined;
    let channelCode: number | undefined;
    channel.on('error', (error: unknown) => {
      channelReason ??= describe(error);
      channelCode ??= replyCodeOf(error);
      watch.link?.fail({ scope: 'channel', reason: channelReason, replyCode: channelCode });
    });
    // A connection that dies closes its channels first, then says why: let the connection speak first.
    channel.on('close', () => queueMicrotask(() => watch.link?.fail({ scope: 'channel', reason: channelReason ?? 'channel closed', replyCode: channelCode })));
    channel.on('return', (message: Message) => watch.link?.returned(message));
    channel.on('drain', () => watch.link?.drained());
    channel.on('handler-error', (error: unknown) => log('error', { error: describe(error) }, 'rabbitmq publisher channel handler failed'));

    stage = 'exchange';
    if (options.declareExchange) await channel.assertExchange(options.exchange, options.exchangeType, { durable: true });
    if (watch.closed || channelReason !== undefined) throw new Error(watch.reason ?? channelReason ?? 'closed while opening');
    const link = new Link<T>(model, channel, hooks, options.connectTimeoutMs);
    watch.link = link;
    return link;
  } catch (error) {
    if (model !== undefined) void closeQuietly(model, options.connectTimeoutMs);
    // A connection that died while the channel or exchange was being set up is a connection failure.
    throw watch.closed ? new LinkOpenError('connect', watch.reason ?? describe(error)) : new LinkOpenError(stage, describe(error));
  }
}
