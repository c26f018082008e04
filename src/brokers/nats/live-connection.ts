import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { driverMessage, toConnectError } from './errors.js';
import type { ResolvedNatsPublisherOptions } from './options.js';

/** Pause between reconnect attempts (plus up to RECONNECT_JITTER_MS), forever: a relay outlives broker restarts. */
export const RECONNECT_TIME_WAIT_MS = 1000;
const RECONNECT_JITTER_MS = 250;

/** One client connection and what we know of its state. */
export interface LiveConnection {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  /** Connected right now (false between a disconnect and the reconnect). */
  up: boolean;
  /** Closed for good: the next publish opens a new connection. */
  dead: boolean;
  /** Aborts of publishes waiting for a PubAck on this connection, called when it drops. */
  readonly pending: Set<() => void>;
  /** Publishes waiting for the connection to come back (or die), called when it does. */
  readonly wakers: Set<() => void>;
}

export interface LiveConnectionEvents {
  /** The server's info changed (connected or reconnected): its max_payload may differ. */
  onInfo(nc: NatsConnection): void;
  /** The connection closed for good. */
  onDead(live: LiveConnection): void;
  /** The client lost its server, started a reconnect attempt, or reconnected (for `connectionState()`). */
  onConnectionChange(change: 'lost' | 'reconnecting' | 'reconnected'): void;
  /** True once the publisher is closing: a close is then expected, not worth a warning. */
  isClosing(): boolean;
}

function callAll(callbacks: Set<() => void>): void {
  const all = [...callbacks];
  callbacks.clear();
  for (const callback of all) callback();
}

/** Connects (credentials as client options, never in the URL) or throws a retryable PublishError. */
export async function openLiveConnection(options: ResolvedNatsPublisherOptions, where: string, events: LiveConnectionEvents): Promise<LiveConnection> {
  const connectOptions: NodeConnectionOptions = {
    servers: options.servers.map((server) => server.hostPort),
    name: options.name,
    timeout: options.connectTimeoutMs,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_TIME_WAIT_MS,
    reconnectJitter: RECONNECT_JITTER_MS,
    waitOnFirstConnect: false,
    // Otherwise the client builds two Error objects (stack traces) per publish: a fifth of the relay's CPU.
    // Our errors name the message id and subject, which is what an operator needs.
    noAsyncTraces: true,
    ...options.auth,
    ...(options.tls ? { tls: {} } : {}),
  };
  let nc: NatsConnection;
  try {
    nc = await connect(connectOptions);
  } catch (error) {
    throw toConnectError(error, { where, secrets: options.secrets });
  }
  const live: LiveConnection = { nc, js: jetstream(nc), up: true, dead: false, pending: new Set(), wakers: new Set() };
  events.onInfo(nc);
  follow(live, options, where, events);
  return live;
}

/** Follows the client's status: fails pending publishes on disconnect, wakes waiters on reconnect or close. */
function follow(live: LiveConnection, options: ResolvedNatsPublisherOptions, where: string, events: LiveConnectionEvents): void {
  const { logger, secrets } = options;
  const fields = { servers: where };
  void (async () => {
    for await (const status of live.nc.status()) {
      if (status.type === 'disconnect') {
        if (!live.up) continue;
        live.up = false;
        events.onConnectionChange('lost');
        callAll(live.pending);
        logger.warn({ ...fields, server: status.server }, 'nats publisher disconnected; reconnecting');
      } else if (status.type === 'reconnecting') {
        if (!live.dead) events.onConnectionChange('reconnecting');
      } else if (status.type === 'reconnect') {
        live.up = true;
        events.onConnectionChange('reconnected');
        events.onInfo(live.nc);
        callAll(live.wakers);
        logger.info({ ...fields, server: status.server }, 'nats publisher reconnected');
      } else if (status.type === 'error') {
        logger.warn({ ...fields, error: driverMessage(status.error, secrets) }, 'nats publisher connection error');
      }
    }
  })().catch(() => undefined);
  void live.nc.closed().then((error) => {
    live.dead = true;
    live.up = false;
    events.onDead(live);
    callAll(live.pending);
    callAll(live.wakers);
    if (!events.isClosing()) {
      const reason = error instanceof Error ? driverMessage(error, secrets) : 'closed';
      logger.warn({ ...fields, error: reason }, 'nats publisher connection closed; the next publish opens a new one');
    }
  });
}
