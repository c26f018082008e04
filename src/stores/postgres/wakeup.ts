import { describeError } from '../../core/errors.js';
import { quoteIdentifier, validateIdentifier } from '../../core/identifiers.js';
import { silentLogger } from '../../core/logger.js';
import type { CommitNotifier, Logger, WakeSignal } from '../../core/ports.js';
import type { SqlExecutor } from './database.js';

export const DEFAULT_WAKE_CHANNEL = 'outboxer_wakeup';

/** The part of a `pg` Client a listener needs. */
export interface ListenClientLike extends SqlExecutor {
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  end(): Promise<void>;
}

export interface PgCommitNotifierOptions {
  readonly channel?: string;
  /** At most one NOTIFY per this many ms from this process; bursts collapse into one. Default 5. */
  readonly coalesceMs?: number;
  readonly logger?: Logger;
}

/**
 * Sends `pg_notify` on its own short autocommit statement *after* the writer's commit, coalesced.
 * A NOTIFY inside every writer's transaction would take Postgres's global notify lock at each commit and
 * serialize the writers; this one costs one tiny transaction per burst, off the writers' path.
 */
export function pgCommitNotifier(pool: SqlExecutor, options: PgCommitNotifierOptions = {}): CommitNotifier {
  const channel = validateIdentifier(options.channel ?? DEFAULT_WAKE_CHANNEL, 'wake channel');
  const coalesceMs = options.coalesceMs ?? 5;
  const logger = options.logger ?? silentLogger;
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> | undefined;
  let closed = false;
  const send = () => {
    timer = undefined;
    sending = pool
      .query('SELECT pg_notify($1, $2)', [channel, ''])
      .then(() => undefined)
      .catch((error: unknown) => logger.warn({ error: describeError(error) }, 'wake-up NOTIFY failed; relays will find the messages by polling'))
      .finally(() => {
        sending = undefined;
      });
  };
  return {
    notify() {
      if (closed || timer !== undefined) return;
      timer = setTimeout(send, coalesceMs);
      timer.unref();
    },
    async close() {
      closed = true;
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
      await sending;
    },
  };
}

export interface PgListenWakeSignalOptions {
  /** Opens a dedicated connection (not from a pool: LISTEN lives on one session). */
  readonly connect: () => Promise<ListenClientLike>;
  readonly channel?: string;
  readonly reconnectDelayMs?: number;
  readonly logger?: Logger;
}

/**
 * LISTENs on a dedicated connection and wakes the relay on each notification. Notifications sent while
 * the connection was down are lost, so every (re)connect also wakes the relay once; a connection that
 * dies silently is caught by the keepalive of the client you connect, and polling covers the gap.
 */
export function pgListenWakeSignal(options: PgListenWakeSignalOptions): WakeSignal {
  const channel = validateIdentifier(options.channel ?? DEFAULT_WAKE_CHANNEL, 'wake channel');
  const reconnectDelayMs = options.reconnectDelayMs ?? 1000;
  const logger = options.logger ?? silentLogger;
  let client: ListenClientLike | undefined;
  let stopped = true;
  let retry: NodeJS.Timeout | undefined;

  const listen = async (onWake: () => void): Promise<void> => {
    if (stopped) return;
    let next: ListenClientLike | undefined;
    try {
      next = await options.connect();
      const current = next;
      current.on('notification', (message) => {
        if (message.channel === channel) onWake();
      });
      current.on('error', () => undefined);
      current.on('end', () => {
        if (client !== current) return;
        client = undefined;
        schedule(onWake);
      });
      await current.query(`LISTEN ${quoteIdentifier(channel)}`);
      if (stopped) {
        await current.end().catch(() => undefined);
        return;
      }
      client = current;
      onWake();
    } catch (error) {
      logger.warn({ error: describeError(error), retryInMs: reconnectDelayMs }, 'wake-up LISTEN connection failed; polling meanwhile');
      await next?.end().catch(() => undefined);
      schedule(onWake);
    }
  };
  const schedule = (onWake: () => void) => {
    if (stopped || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      void listen(onWake);
    }, reconnectDelayMs);
    retry.unref();
  };

  return {
    async start(onWake) {
      stopped = false;
      await listen(onWake);
    },
    async stop() {
      stopped = true;
      if (retry !== undefined) clearTimeout(retry);
      retry = undefined;
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
