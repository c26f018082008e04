import { ConfigurationError } from '../../../core/errors.js';
import { createJsonLogger } from '../../../core/logger.js';
import type { DestinationPause } from '../../../core/ports.js';
import { writeAuditLine } from '../audit-line.js';
import type { CliConfig } from '../config.js';
import { openOperatorStore, type OperatorStore } from '../database.js';
import { CliFailure, EXIT_OK, tableNotMigrated, UsageError } from '../errors.js';
import { printable } from '../format.js';
import type { CliIo } from '../io.js';
import { destinationPausesJson, destinationPausesText } from './paused-destination-list.js';
import { isMissingTable } from './paused-topic-list.js';

/** A reason is bounded by the store (500 bytes): shown whole. */
const SHOWN_MAX_LENGTH = 600;

/**
 * Runs `work` on a one-connection operator store. The store's refusals keep their code: a bad input or the most
 * pauses a table allows is a usage error (exit 2); a table without the list of paused destinations says to migrate.
 */
async function withOperatorStore<T>(config: CliConfig, io: CliIo, work: (store: OperatorStore) => Promise<T>): Promise<T> {
  const store = await openOperatorStore(config, createJsonLogger(config.logLevel, io.err));
  try {
    return await work(store);
  } catch (error) {
    if (error instanceof ConfigurationError) throw new UsageError(`${error.code}: ${error.message}`, config.command);
    if (isMissingTable(error)) {
      throw tableNotMigrated(config, 'it has no list of paused destinations: schema version 13 adds it on PostgreSQL, 5 on MariaDB/MySQL and SQLite');
    }
    throw error;
  } finally {
    await store.close();
  }
}

function requiredDestination(config: CliConfig): string {
  if (config.pausedDestination === undefined) throw new CliFailure('OUTBOXER_INVALID_OPTION', `'${config.command}' needs a destination`);
  return config.pausedDestination;
}

/** `outboxer destinations list [--json]`: the destinations operators paused, oldest pause first. */
export async function destinationsListCommand(config: CliConfig, io: CliIo): Promise<number> {
  const pauses = await withOperatorStore(config, io, (store) => store.pausedDestinations());
  if (config.json) {
    io.out(`${JSON.stringify(destinationPausesJson(pauses), null, 2)}\n`);
    return EXIT_OK;
  }
  if (pauses.length === 0) {
    io.out(`no paused destinations in ${config.schema}.${config.table}\n`);
    return EXIT_OK;
  }
  io.out(destinationPausesText(pauses, `${config.schema}.${config.table}`));
  return EXIT_OK;
}

/** `outboxer destinations pause <name> [--reason <text>]`: pauses it (every topic) for every relay; exit 0 if it was paused already. */
export async function destinationPauseCommand(config: CliConfig, io: CliIo): Promise<number> {
  const destination = requiredDestination(config);
  const { paused, existing } = await withOperatorStore(config, io, async (store) => {
    const inserted = await store.pauseDestination(destination, config.reason);
    const found: DestinationPause | undefined = inserted ? undefined : (await store.pausedDestinations()).find((pause) => pause.destination === destination);
    return { paused: inserted, existing: found };
  });
  writeAuditLine(
    config,
    io,
    'destinations.pause',
    { destination, reason: config.reason, changed: paused ? 1 : 0 },
    paused ? 'destination paused' : 'destination was paused already',
  );
  if (paused) {
    io.out(
      `destination ${destination} paused for every relay (relays hold its messages, every topic, within about 5 s; the other destinations keep flowing)\n`,
    );
  } else if (existing === undefined) {
    // resumed between the pause and the read of the list
    io.out(`destination ${destination} was already paused\n`);
  } else {
    const why = existing.reason === '' ? '' : `: ${printable(existing.reason, SHOWN_MAX_LENGTH)}`;
    io.out(`destination ${destination} was already paused since ${existing.pausedAt.toISOString()}${why}\n`);
  }
  return EXIT_OK;
}

/** `outboxer destinations resume <name>`: ends the pause; exit 0 if it was not paused. */
export async function destinationResumeCommand(config: CliConfig, io: CliIo): Promise<number> {
  const destination = requiredDestination(config);
  const resumed = await withOperatorStore(config, io, (store) => store.resumeDestination(destination));
  writeAuditLine(config, io, 'destinations.resume', { destination, changed: resumed ? 1 : 0 }, resumed ? 'destination resumed' : 'destination was not paused');
  io.out(
    resumed
      ? `destination ${destination} resumed: its held messages publish in key order as their holds run out (docs/fan-out.md, Pausing a destination)\n`
      : `destination ${destination} was not paused\n`,
  );
  return EXIT_OK;
}
