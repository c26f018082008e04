import type { Logger, Publisher } from '../../core/ports.js';
import type { RelaySettings } from './config.js';
import { CliFailure } from './errors.js';

/** The broker clients are optional peer dependencies: a missing one is a clear one-line failure. */
const PEERS: Readonly<Record<'rabbitmq' | 'nats', string>> = Object.freeze({
  rabbitmq: 'amqplib',
  nats: '@nats-io/transport-node @nats-io/jetstream',
});

/** Loads a publisher module only when it is chosen (`import()`), so its broker client stays optional. */
async function load<T>(publisher: 'rabbitmq' | 'nats', importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new CliFailure('OUTBOXER_MISSING_DEPENDENCY', `--publisher ${publisher} needs ${PEERS[publisher]}: npm install ${PEERS[publisher]}`);
    }
    throw error;
  }
}

/**
 * Builds the publisher the relay settings name. `publishTimeoutMs` is the relay's: handed to the
 * publisher too, so that its own confirm timeout neither cuts a longer one short nor outlives it.
 */
export async function createPublisher(settings: RelaySettings, logger: Logger, publishTimeoutMs: number): Promise<Publisher> {
  switch (settings.publisher) {
    case 'console': {
      const { createConsolePublisher } = await import('../../publishers/console/index.js');
      return createConsolePublisher();
    }
    case 'rabbitmq': {
      const { createRabbitMqPublisher } = await load('rabbitmq', () => import('../../publishers/rabbitmq/index.js'));
      const url = settings.brokerUrls[0];
      if (url === undefined) throw new CliFailure('OUTBOXER_INVALID_OPTION', 'no broker URL');
      return createRabbitMqPublisher({ url, exchange: settings.exchange, confirmTimeoutMs: publishTimeoutMs, logger });
    }
    case 'nats': {
      const { createNatsPublisher } = await load('nats', () => import('../../publishers/nats/index.js'));
      return createNatsPublisher({ servers: settings.brokerUrls, subjectPrefix: settings.subjectPrefix, publishTimeoutMs, logger });
    }
  }
}
