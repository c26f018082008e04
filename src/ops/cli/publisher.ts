import type { Logger, Publisher } from '../../core/ports.js';
import type { RelaySettings } from './config.js';
import type { PublisherFlagValue } from './publishers/cli-publisher.js';
import { cliPublisher } from './publishers/registry.js';

/**
 * Builds the publisher the relay settings name. `publishTimeoutMs` is the relay's: handed to the
 * publisher too, so that its own confirm timeout neither cuts a longer one short nor outlives it.
 */
export async function createPublisher(
  settings: Pick<RelaySettings, 'publisher' | 'publisherSettings'>,
  logger: Logger,
  publishTimeoutMs: number,
): Promise<Publisher> {
  return cliPublisher(settings.publisher).create(settings.publisherSettings, { logger, publishTimeoutMs });
}

/** The publisher's own flags for the start log, by camelCase name (`subjectPrefix`); a secret flag is never logged. */
export function loggedPublisherFlags(settings: Pick<RelaySettings, 'publisher' | 'publisherSettings'>): Record<string, PublisherFlagValue> {
  const secret = cliPublisher(settings.publisher).secretFlags ?? [];
  const logged: Record<string, PublisherFlagValue> = {};
  for (const [flag, value] of Object.entries(settings.publisherSettings.flags)) {
    if (!secret.includes(flag)) logged[flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase())] = value;
  }
  return logged;
}
