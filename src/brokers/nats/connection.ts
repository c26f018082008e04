import { PublishError } from '../../core/errors.js';
import type { BrokerConnectionState } from '../../core/relay-health.js';
import { BackgroundReconnect } from '../background-reconnect.js';
import { ConnectionStateTracker } from '../connection-state.js';
import { openLiveConnection, type LiveConnection } from './live-connection.js';
import type { ResolvedNatsPublisherOptions } from './options.js';

export type { LiveConnection } from './live-connection.js';

/**
 * Connects lazily, shares one connection (and one connect attempt) among all publishes, follows the
 * client's reconnects, and opens a new connection when the old one closed for good. When there is no
 * connection (the first attempt failed, or it closed for good), tries again in the background (1 s, doubling
 * to 30 s) so that an idle publisher's state follows the server; the client reconnects a live one itself.
 * Waiters are plain callback sets, removed when they finish: nothing piles up during a long outage.
 */
export class NatsConnectionManager {
  readonly #options: ResolvedNatsPublisherOptions;
  readonly #where: string;
  #live: LiveConnection | undefined;
  #connecting: Promise<LiveConnection> | undefined;
  #closing = false;
  readonly #closeWaiters = new Set<() => void>();
  #maxPayload: number | undefined;
  readonly #state = new ConnectionStateTracker();
  readonly #reconnect = new BackgroundReconnect(() => {
    if (this.#closing || this.#live !== undefined || this.#connecting !== undefined) return;
    this.#connect().catch(() => undefined); // a failure schedules the next try
  });

  constructor(options: ResolvedNatsPublisherOptions) {
    this.#options = options;
    this.#where = options.servers.map((server) => server.redacted).join(', ');
  }

  /** The servers for people: credentials hidden. */
  get where(): string {
    return this.#where;
  }

  /** The connection now, from the client's status events (no I/O). */
  get state(): BrokerConnectionState {
    return this.#state.state;
  }

  /** The server's `max_payload` (headers and body), once connected. */
  get maxPayload(): number | undefined {
    return this.#maxPayload;
  }

  /** A connected connection before `deadline` (a performance.now() instant), or a retryable PublishError. */
  async acquire(deadline: number): Promise<LiveConnection> {
    for (;;) {
      if (this.#closing) throw this.closedError();
      const live = this.#live;
      if (live !== undefined && !live.dead) {
        if (live.up) return live;
        await this.#wait(deadline, 'the connection is down and the client is still reconnecting', (wake) => {
          live.wakers.add(wake);
          return () => live.wakers.delete(wake);
        });
        continue;
      }
      const attempt = this.#connecting ?? this.#connect();
      await this.#wait(deadline, 'no connection could be made in time', (wake, fail) => {
        attempt.then(wake, fail);
        return () => undefined;
      });
    }
  }

  /**
   * Settles with `work` (a request sent on `live`), or rejects at once with a retryable PublishError
   * if the connection drops first: a PubAck lost with its connection never arrives.
   */
  watch<T>(live: LiveConnection, work: Promise<T>, id: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const abort = (): void => reject(this.#lost(id));
      if (!live.up || live.dead) {
        work.catch(() => undefined);
        abort();
        return;
      }
      live.pending.add(abort);
      work.then(
        (value) => {
          live.pending.delete(abort);
          resolve(value);
        },
        (error: unknown) => {
          live.pending.delete(abort);
          reject(error);
        },
      );
    });
  }

  closedError(): PublishError {
    return new PublishError('OUTBOXER_CLOSED', `the NATS publisher for ${this.#where} is closed`);
  }

  /** Stops new connections and wakes publishes waiting for one (they reject with OUTBOXER_CLOSED). */
  beginClose(): void {
    this.#closing = true;
    this.#reconnect.stop();
    for (const waiter of [...this.#closeWaiters]) waiter();
  }

  /** Closes the connection (and one still being made), bounded by the connect timeout. */
  async close(): Promise<void> {
    this.beginClose();
    const bound = this.#options.connectTimeoutMs;
    const live =
      this.#live ??
      (await bounded(
        this.#connecting?.catch(() => undefined),
        bound,
      ));
    if (live !== undefined && !live.nc.isClosed())
      await bounded(
        live.nc.close().catch(() => undefined),
        bound,
      );
    this.#state.closed();
  }

  #lost(id: string): PublishError {
    return new PublishError(
      'OUTBOXER_BROKER_UNAVAILABLE',
      `the connection to NATS at ${this.#where} was lost before the PubAck for message ${id}; it may have been stored, and a retry with the same Nats-Msg-Id is deduplicated by the stream`,
    );
  }

  #unavailable(reason: string): PublishError {
    return new PublishError(
      'OUTBOXER_BROKER_UNAVAILABLE',
      `NATS at ${this.#where} is unavailable: ${reason} (publish timeout ${this.#options.publishTimeoutMs} ms)`,
    );
  }

  /** Waits for `subscribe` to wake us, but not past `deadline` nor past close. */
  #wait(deadline: number, reason: string, subscribe: (wake: () => void, fail: (error: unknown) => void) => () => void): Promise<void> {
    const remaining = deadline - performance.now();
    if (remaining <= 0) return Promise.reject(this.#unavailable(reason));
    return new Promise<void>((resolve, reject) => {
      let done = false;
      let unsubscribe = (): void => undefined;
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.#closeWaiters.delete(onClose);
        unsubscribe();
        settle();
      };
      const onClose = (): void => finish(() => reject(this.closedError()));
      const timer = setTimeout(() => finish(() => reject(this.#unavailable(reason))), remaining);
      this.#closeWaiters.add(onClose);
      unsubscribe = subscribe(
        () => finish(resolve),
        (error) => finish(() => reject(error)),
      );
    });
  }

  #connect(): Promise<LiveConnection> {
    const attempt = (async () => {
      const live = await openLiveConnection(this.#options, this.#where, {
        onInfo: (nc) => {
          const maxPayload = nc.info?.max_payload;
          if (typeof maxPayload === 'number' && maxPayload > 0) this.#maxPayload = maxPayload;
        },
        onDead: (dead) => {
          if (this.#live !== dead) return;
          this.#live = undefined;
          this.#state.lost();
          if (!this.#closing) this.#reconnect.schedule();
        },
        onConnectionChange: (change) => {
          if (change === 'lost') this.#state.lost();
          else if (change === 'reconnecting') this.#state.attempting();
          else this.#state.connected();
        },
        isClosing: () => this.#closing,
      });
      if (this.#closing) {
        await live.nc.close().catch(() => undefined);
        throw this.closedError();
      }
      this.#live = live;
      this.#state.connected();
      this.#reconnect.connected();
      this.#options.logger.info({ servers: this.#where, server: live.nc.getServer(), maxPayload: this.#maxPayload }, 'nats publisher connected');
      return live;
    })();
    this.#connecting = attempt;
    this.#state.attempting();
    const done = (): void => {
      if (this.#connecting === attempt) this.#connecting = undefined;
    };
    attempt.then(done, () => {
      done();
      this.#state.attemptFailed();
      if (!this.#closing) this.#reconnect.schedule();
    });
    return attempt;
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
