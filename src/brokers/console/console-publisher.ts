import { OutboxerError } from '../../core/errors.js';
import { escapeUnprintable } from '../../core/printable.js';
import type { OutboxMessage } from '../../core/message.js';
import type { Publisher, PublisherCapabilities } from '../../core/ports.js';

export interface ConsolePublisherOptions {
  /** Where lines go. Default: standard output. */
  readonly write?: (line: string) => void;
  /** Print the payload too (it may hold personal data: off in shared logs). Default true. */
  readonly showPayload?: boolean;
}

/** For development: "publishes" by printing one line per message, and always confirms. */
export function createConsolePublisher(options: ConsolePublisherOptions = {}): Publisher {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const showPayload = options.showPayload ?? true;
  let closed = false;
  const capabilities: PublisherCapabilities = Object.freeze({});
  return {
    name: 'console',
    capabilities,
    async publish(message: OutboxMessage) {
      if (closed) throw new OutboxerError('OUTBOXER_CLOSED', `console publisher is closed; message ${message.id} was not published`);
      const key = message.key === null ? '' : ` key=${escapeUnprintable(message.key)}`;
      const payload = !showPayload
        ? ''
        : typeof message.body === 'string'
          ? ` ${escapeUnprintable(message.body)}`
          : ` <${message.body.byteLength} bytes ${escapeUnprintable(message.contentType)}>`;
      write(
        `[outboxer] ${escapeUnprintable(message.topic)}${key} type=${escapeUnprintable(message.type)} id=${message.id} attempt=${message.attempts}${payload}`,
      );
    },
    async close() {
      closed = true;
    },
  };
}
