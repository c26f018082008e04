import { isIP } from 'node:net';
import rhea, { type Connection, type EventContext } from 'rhea';
import { type BrokerError, brokerError } from './errors.js';
import type { ResolvedAmqp10PublisherOptions } from './options.js';
import type { SenderLink } from './sender-link.js';

/** A connection attempt that failed; `broker` says why, secrets removed. */
export class ConnectFailure extends Error {
  constructor(readonly broker: BrokerError) {
    super(broker.description);
    this.name = 'ConnectFailure';
  }
}

/**
 * One open AMQP 1.0 connection and its sender links (one per address, least recently used first). Never
 * repaired: once it is lost, `dead` stays true, its links have failed what they held, and a new one is opened.
 */
export class LiveConnection {
  dead = false;
  readonly links = new Map<string, SenderLink>();
  #closed: Promise<void> | undefined;

  constructor(
    readonly connection: Connection,
    readonly closeTimeoutMs: number,
  ) {}

  /**
   * A deliberate close: `close` frame, then rhea ends the socket once the broker answered (and with it stops its
   * idle timers). A broker that does not answer in time gets the socket destroyed.
   */
  close(): Promise<void> {
    this.dead = true;
    this.#closed ??= new Promise<void>((resolve) => {
      const socket = socketOf(this.connection);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        destroySocket(this.connection);
        stopIdleTimers(this.connection);
        done();
      }, this.closeTimeoutMs);
      timer.unref();
      if (socket === undefined || socket.destroyed === true) return done();
      socket.once('close', done);
      try {
        this.connection.close();
      } catch {
        destroySocket(this.connection);
      }
    });
    return this.#closed;
  }
}

interface SocketLike {
  readonly destroyed?: boolean;
  destroy?(): void;
  once(event: 'close', listener: () => void): unknown;
}

function socketOf(connection: Connection): SocketLike | undefined {
  return (connection as unknown as { socket?: SocketLike }).socket;
}

/** rhea re-arms its idle timers on every frame read and clears them only when the socket ends by itself. */
function stopIdleTimers(connection: Connection): void {
  const timers = connection as unknown as Record<'heartbeat_in' | 'heartbeat_out' | 'abort_idle', NodeJS.Timeout | undefined>;
  for (const name of ['heartbeat_in', 'heartbeat_out', 'abort_idle'] as const) {
    clearTimeout(timers[name]);
    timers[name] = undefined;
  }
}

function destroySocket(connection: Connection): void {
  try {
    socketOf(connection)?.destroy?.();
  } catch {
    // already gone
  }
}

/**
 * Opens a connection (TCP or TLS, SASL PLAIN with the URL's credentials or ANONYMOUS without, AMQP open) within
 * `connectTimeoutMs`. rhea's own reconnect is off: the publisher decides when to connect again. `onLost` is called
 * once if an open connection is lost or closed by the broker. Rejects with a ConnectFailure.
 */
export function openConnection(options: ResolvedAmqp10PublisherOptions, onLost: (live: LiveConnection, error: BrokerError) => void): Promise<LiveConnection> {
  const container = rhea.create_container({ id: options.containerId });
  // Every error is handled on the connection, its sessions and links; this only keeps rhea from throwing one.
  container.on('error', () => undefined);
  const connection = container.connect({
    host: options.host,
    port: options.port,
    ...(options.tls ? { transport: 'tls' as const, ...(isIP(options.host) === 0 ? { servername: options.host } : {}) } : { transport: 'tcp' as const }),
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
    // RabbitMQ picks the virtual host from the open frame's hostname; other brokers get the host itself.
    ...(options.vhost === undefined ? {} : { hostname: `vhost:${options.vhost}` }),
    reconnect: false,
    idle_time_out: options.idleTimeoutMs,
    container_id: options.containerId,
  });
  const describe = (error: unknown): BrokerError => brokerError(error, options.secrets);
  let live: LiveConnection | undefined;
  let lastError: unknown;
  return new Promise<LiveConnection>((resolve, reject) => {
    let settled = false;
    const fail = (error: BrokerError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // After rhea has finished with the frame being read: it re-arms its idle timer at the end of each read.
      setImmediate(() => {
        destroySocket(connection);
        stopIdleTimers(connection);
      });
      reject(new ConnectFailure(error));
    };
    const timer = setTimeout(() => {
      fail({ condition: undefined, description: `no AMQP 1.0 connection within connectTimeoutMs (${options.connectTimeoutMs} ms)` });
      try {
        connection.close();
      } catch {
        // the socket is gone already
      }
    }, options.connectTimeoutMs);
    const ended = (context: EventContext): void => {
      const error = describe(context.error ?? connection.error ?? lastError ?? 'the connection closed');
      if (!settled) {
        fail(
          lastError === undefined && context.error === undefined && connection.error === undefined
            ? { condition: undefined, description: 'the server closed the connection before the AMQP 1.0 handshake completed' }
            : error,
        );
        return;
      }
      if (live !== undefined && !live.dead) {
        live.dead = true;
        onLost(live, error);
      }
    };
    connection.on('connection_open', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      live = new LiveConnection(connection, options.connectTimeoutMs);
      resolve(live);
    });
    connection.on('connection_error', (context: EventContext) => {
      lastError = context.connection.error;
    });
    connection.on('protocol_error', (context: EventContext) => {
      lastError = context.error ?? lastError;
    });
    connection.on('error', (context: EventContext) => {
      lastError = context.error ?? lastError;
    });
    connection.on('connection_close', ended);
    connection.on('disconnected', ended);
  });
}
