import { createClient } from 'redis';
import { PublishError } from '../../core/errors.js';
import type { BrokerConnectionState } from '../../core/relay-health.js';
import { BackgroundReconnect } from '../background-reconnect.js';
import { ConnectionStateTracker } from '../connection-state.js';
import { driverMessage, isAuthRefusal, toConnectError } from './errors.js';
import type { ResolvedRedisPublisherOptions } from './options.js';
import { ReplicaWaits } from './replica-waits.js';

function newClient(options: ResolvedRedisPublisherOptions, reconnectStrategy: (retries: number, cause: Error) => number | false) {
  const { host, port, tls, database } = options.endpoint;
  return createClient({
    socket: tls
      ? { host, port, tls: true, connectTimeout: options.connectTimeoutMs, reconnectStrategy }
      : { host, port, tls: false, connectTimeout: options.connectTimeoutMs, reconnectStrategy },
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
    database,
    name: options.clientName,
    // A command sent while the connection is down fails at once instead of waiting, unbounded, in the client's queue.
    disableOfflineQueue: true,
  });
}

export type RedisClient = ReturnType<typeof newClient>;

/** A ready connection, as one publish uses it. */
export interface LiveRedis {
  readonly client: RedisClient;
  /** WAIT on this very connection (its generation): undefined once it reconnected. */
  readonly replicas: ReplicaWaits;
}

const noop = (): void => undefined;

/**
 * One client for every publish. Connects lazily (one attempt shared by all waiting publishes), lets node-redis
 * reconnect a connection that was up (50 ms doubling to 2 s), and makes a new client when an attempt failed or a
 * reconnect met refused credentials. Without a client it tries again in the background (1 s doubling to 30 s), so
 * that an idle publisher's `connectionState()` follows the server.
 */
export class RedisConnection {
  readonly #options: ResolvedRedisPublisherOptions;
  #client: RedisClient | undefined;
  #live: LiveRedis | undefined;
  #connecting: Promise<RedisClient> | undefined;
  #closing = false;
  /** Publishes waiting for a connection to be ready (or to die): woken on every change. */
  readonly #wakers = new Set<() => void>();
  readonly #closeWaiters = new Set<() => void>();
  readonly #state = new ConnectionStateTracker();
  readonly #reconnect = new BackgroundReconnect(() => {
    if (this.#closing || this.#client !== undefined || this.#connecting !== undefined) return;
    this.#connect().catch(noop);
  });

  constructor(options: ResolvedRedisPublisherOptions) {
    this.#options = options;
  }

  get state(): BrokerConnectionState {
    return this.#state.state;
  }

  closedError(): PublishError {
    return new PublishError('OUTBOXER_CLOSED', `the redis publisher for ${this.#options.redactedUrl} is closed`);
  }

  /** A ready connection before `deadline` (a performance.now() instant), or a PublishError. */
  async acquire(deadline: number): Promise<LiveRedis> {
    for (;;) {
      if (this.#closing) throw this.closedError();
      if (this.#client !== undefined) {
        if (this.#client.isReady && this.#live !== undefined) return this.#live;
        let wake = noop;
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
          this.#wakers.add(resolve);
        });
        try {
          await this.#wait(deadline, woken);
        } finally {
          this.#wakers.delete(wake);
        }
        continue;
      }
      await this.#wait(deadline, this.#connecting ?? this.#connect());
    }
  }

  /** Stops new connections and wakes waiting publishes (they reject with OUTBOXER_CLOSED). */
  beginClose(): void {
    this.#closing = true;
    this.#reconnect.stop();
    this.#wake();
    for (const waiter of [...this.#closeWaiters]) waiter();
  }

  /** Closes the client after its pending replies (bounded by connectTimeoutMs). */
  async close(): Promise<void> {
    this.beginClose();
    await bounded(this.#connecting?.catch(noop), this.#options.connectTimeoutMs);
    const client = this.#client;
    this.#client = undefined;
    this.#live = undefined;
    if (client !== undefined) {
      const closed = await bounded(
        client.close().then(
          () => true,
          () => true,
        ),
        this.#options.connectTimeoutMs,
      );
      if (closed === undefined) destroyQuietly(client);
    }
    this.#state.closed();
  }

  #wake(): void {
    const all = [...this.#wakers];
    this.#wakers.clear();
    for (const wake of all) wake();
  }

  #wait(deadline: number, event: Promise<unknown>): Promise<void> {
    const remaining = deadline - performance.now();
    const unavailable = new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `Redis at ${this.#options.redactedUrl} is unavailable: no ready connection in time`);
    if (remaining <= 0) return Promise.reject(unavailable);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(unavailable), remaining);
      const onClose = (): void => reject(this.closedError());
      if (this.#closing) onClose();
      else this.#closeWaiters.add(onClose);
      event
        .then(
          () => resolve(),
          (error: unknown) => reject(error),
        )
        .finally(() => {
          clearTimeout(timer);
          this.#closeWaiters.delete(onClose);
        });
    });
  }

  #connect(): Promise<RedisClient> {
    const { logger, redactedUrl, secrets, connectTimeoutMs } = this.#options;
    let everReady = false;
    let lastError: unknown;
    // eslint-disable-next-line prefer-const -- giveUp, defined first, may run before newClient() returns
    let client: RedisClient | undefined;
    const giveUp = (): void => {
      if (client === undefined || this.#client !== client) return;
      this.#client = undefined;
      this.#live = undefined;
      this.#state.lost();
      this.#wake();
      if (!this.#closing) this.#reconnect.schedule();
    };
    client = newClient(this.#options, (retries, cause) => {
      if (!everReady || this.#closing) return false;
      if (isAuthRefusal(cause)) {
        logger.warn(
          { url: redactedUrl, error: driverMessage(cause, secrets) },
          'redis publisher: credentials refused on reconnect; a new connection will be made',
        );
        queueMicrotask(giveUp);
        return false;
      }
      return Math.min(2 ** retries * 50, 2000) + Math.floor(Math.random() * 200);
    });
    const made = client;
    made.on('error', (error: unknown) => {
      lastError = error;
      if (everReady && !this.#closing) logger.warn({ url: redactedUrl, error: driverMessage(error, secrets) }, 'redis publisher connection error');
      if (this.#client === made && !made.isReady) this.#state.lost();
    });
    made.on('reconnecting', () => this.#state.attempting());
    made.on('ready', () => {
      if (everReady) logger.info({ url: redactedUrl }, 'redis publisher reconnected');
      everReady = true;
      if (this.#client === made) {
        this.#live = this.#makeLive(made);
        this.#state.connected();
        this.#wake();
      }
    });
    const attempt = (async () => {
      const timedOut = new PublishError(
        'OUTBOXER_BROKER_UNAVAILABLE',
        `cannot connect to Redis at ${redactedUrl}: no ready connection within connectTimeoutMs (${connectTimeoutMs} ms)`,
      );
      try {
        const ready = (async () => {
          await made.connect();
          await made.ping(); // a server that wants a password answers NOAUTH here when the URL carries none
        })();
        ready.catch(noop);
        const outcome = await bounded(
          ready.then(() => true),
          connectTimeoutMs,
        );
        // a server that is not Redis makes the decoder fail while the handshake waits: that error says more than the timeout
        if (outcome === undefined) throw lastError === undefined ? timedOut : toConnectError(lastError, redactedUrl, secrets);
      } catch (error) {
        destroyQuietly(made);
        throw error instanceof PublishError ? error : toConnectError(error, redactedUrl, secrets);
      }
      if (this.#closing) {
        destroyQuietly(made);
        throw this.closedError();
      }
      this.#client = made;
      this.#live = this.#makeLive(made);
      this.#state.connected();
      this.#reconnect.connected();
      logger.info({ url: redactedUrl, clientName: this.#options.clientName }, 'redis publisher connected');
      return made;
    })();
    this.#connecting = attempt;
    this.#state.attempting();
    attempt.then(
      () => {
        this.#connecting = undefined;
        this.#wake();
      },
      (error: unknown) => {
        this.#connecting = undefined;
        this.#state.attemptFailed();
        if (!this.#closing) this.#reconnect.schedule();
        logger.warn({ url: redactedUrl, error: error instanceof Error ? error.message : 'connect failed' }, 'redis publisher connection attempt failed');
      },
    );
    return attempt;
  }

  /** The connection as it is now, with WAIT bound to it: a reconnect (a new `ready`) makes a new one, and this one's WAIT refuses. */
  #makeLive(client: RedisClient): LiveRedis {
    const { waitReplicas, waitTimeoutMs, redactedUrl } = this.#options;
    const live: { client: RedisClient; replicas?: ReplicaWaits } = { client };
    live.replicas = new ReplicaWaits(
      () => (this.#live === live && client.isReady ? client.wait(waitReplicas, waitTimeoutMs) : undefined),
      () =>
        new PublishError(
          'OUTBOXER_BROKER_UNAVAILABLE',
          `the connection to Redis at ${redactedUrl} was lost before WAIT answered; the entry may be on the primary only, and a retry adds a second entry with the same id`,
        ),
    );
    return live as LiveRedis;
  }
}

function destroyQuietly(client: RedisClient): void {
  try {
    client.destroy();
  } catch {
    // already closed
  }
}

async function bounded<T>(promise: Promise<T> | undefined, ms: number): Promise<T | undefined> {
  if (promise === undefined) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
