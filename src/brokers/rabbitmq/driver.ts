import type { Channel, ChannelModel } from 'amqplib';
import type { Logger } from '../../core/ports.js';
import { scrubSecrets } from '../../core/redact.js';

const MAX_REASON_LENGTH = 500;

/**
 * A short text for an error thrown or emitted by amqplib or the socket, with every secret of the URL
 * scrubbed. Driver errors are never attached as `cause`: only this text travels on.
 */
export function describeDriverError(error: unknown, secrets: readonly string[]): string {
  let text: string;
  if (error instanceof Error) {
    text = error.message;
    if (text === '' && error instanceof AggregateError) {
      text = error.errors.map((inner: unknown) => (inner instanceof Error ? inner.message : String(inner))).join('; ');
    }
    const code = (error as { code?: unknown }).code;
    if (text === '' && typeof code === 'string') text = code;
    if (text === '') text = error.name;
  } else if (typeof error === 'string') {
    text = error;
  } else {
    text = `non-error value: ${typeof error}`;
  }
  text = scrubSecrets(text, secrets);
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}

/** The AMQP reply code carried by a driver error (320 CONNECTION_FORCED, 404 NOT_FOUND, 406 PRECONDITION_FAILED...). */
export function replyCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

const BROKER_SIZE_LIMIT = /message size (\d+) is larger than configured max size (\d+)/;

/**
 * RabbitMQ closes the channel with 406 PRECONDITION_FAILED "message size N is larger than configured
 * max size M" when a body exceeds its `max_message_size`. Returns M when the reason says so.
 */
export function brokerSizeLimitOf(reason: string): number | undefined {
  const match = BROKER_SIZE_LIMIT.exec(reason);
  return match?.[2] === undefined ? undefined : Number(match[2]);
}

/** A failure while opening a connection, a confirm channel or declaring the exchange; the reason is scrubbed. */
export class LinkOpenError extends Error {
  readonly stage: 'connect' | 'channel' | 'exchange' | 'timeout';
  readonly reason: string;

  constructor(stage: LinkOpenError['stage'], reason: string) {
    super(`${stage}: ${reason}`);
    this.name = 'LinkOpenError';
    this.stage = stage;
    this.reason = reason;
  }
}

/** Closes a connection; if the broker does not answer in time, destroys the socket. Never rejects. */
export function closeQuietly(model: ChannelModel, timeoutMs: number): Promise<void> {
  return closeWithin(
    () => model.close(),
    timeoutMs,
    () => destroySocket(model),
  );
}

/**
 * Closes a channel and waits for the broker's close-ok, which it sends only after handling every method
 * sent on the channel before it (acks included); bounded by `timeoutMs`. Never rejects.
 */
export function closeChannelQuietly(channel: Channel, timeoutMs: number): Promise<void> {
  return closeWithin(
    () => channel.close(),
    timeoutMs,
    () => undefined,
  );
}

function closeWithin(close: () => Promise<void>, timeoutMs: number, onTimeout: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      onTimeout();
      resolve();
    }, timeoutMs);
    timer.unref();
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    try {
      close().then(done, done);
    } catch {
      done();
    }
  });
}

function destroySocket(model: ChannelModel): void {
  try {
    (model as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
  } catch {
    // already gone
  }
}

type Level = keyof Logger;

/** A logger that can never throw into the driver's event handlers. */
export function safeLogger(logger: Logger): (level: Level, fields: Record<string, unknown>, message: string) => void {
  return (level, fields, message) => {
    try {
      logger[level](fields, message);
    } catch {
      // a broken logger must not break publishing
    }
  };
}
