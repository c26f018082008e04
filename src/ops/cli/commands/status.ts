import { createJsonLogger } from '../../../core/logger.js';
import type { OutboxStats } from '../../../core/ports.js';
import type { CliConfig } from '../config.js';
import { openStore } from '../database.js';
import { EXIT_OK } from '../errors.js';
import { humanDuration, renderTable } from '../format.js';
import type { CliIo } from '../io.js';
import { type EngineStatus, engineStatusJson, engineStatusText, groupStatusJson, groupStatusText, readEngineStatus } from './engine-status.js';
import { destinationPausesJson, destinationPausesText, readDestinationPauses } from './paused-destination-list.js';
import { isMissingTable, type PauseListing, pausesJson, pausesText, readPauses } from './paused-topic-list.js';
import type { DestinationPause, RelayGroup } from '../../../core/ports.js';

/**
 * `outboxer status [--json]`: counts per state, the age of the oldest unpublished message, the engine (its
 * partitioning, the live relays and what they hold), the paused topics (by an operator, or
 * held by the relays for a missing destination), and the destinations operators paused as a whole. Read only: it writes nothing, joins no group.
 */
export async function statusCommand(config: CliConfig, io: CliIo): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const { store, engine, label } = await openStore(config, logger, { max: 1 });
  let stats: OutboxStats;
  let engineStatus: EngineStatus | undefined;
  let group: RelayGroup | undefined;
  let paused: PauseListing;
  let pausedDestinations: DestinationPause[];
  try {
    stats = await store.stats();
    if (engine !== undefined) engineStatus = await readEngineStatus(engine);
    else group = await store.relayGroup();
    paused = await readPauses(store).catch((error: unknown) => {
      // a table without the list of operator pauses (schema version 9 on PostgreSQL) still shows the relays' pauses
      if (isMissingTable(error)) return readPauses(store, false);
      throw error;
    });
    pausedDestinations = await readDestinationPauses(store);
  } finally {
    await store.close();
  }
  if (config.json) {
    const { pending, scheduled, published, dead, oldestPendingAgeSeconds } = stats;
    const engineJson = group === undefined ? engineStatusJson(engineStatus) : groupStatusJson(group);
    io.out(
      `${JSON.stringify({ pending, scheduled, published, dead, oldestPendingAgeSeconds, engine: engineJson, pausedTopics: pausesJson(paused.pauses), pausedDestinations: destinationPausesJson(pausedDestinations) })}\n`,
    );
    return EXIT_OK;
  }
  const age = stats.oldestPendingAgeSeconds;
  const rows: string[][] = [
    ['pending', String(stats.pending), 'ready to publish now'],
    ['scheduled', String(stats.scheduled), 'delayed, backing off after a failure, or held (a paused topic)'],
    ['published', String(stats.published), 'published, retained until purged'],
    ['dead', String(stats.dead), "parked: see 'outboxer dead list'"],
  ];
  io.out(`outbox ${label}\n`);
  io.out(renderTable(['state', 'count', ''], rows, new Set([1])));
  const waiting = stats.pending + stats.scheduled;
  io.out(`oldest pending message: ${waiting > 0 ? `${humanDuration(age)} old (${age.toFixed(1)} s)` : 'none'}\n`);
  io.out(group === undefined ? engineStatusText(engineStatus) : groupStatusText(group));
  io.out(paused.pauses.length === 0 ? 'paused topics: none\n' : `paused topics:\n${pausesText(paused, label)}`);
  io.out(pausedDestinations.length === 0 ? 'paused destinations: none\n' : `paused destinations:\n${destinationPausesText(pausedDestinations, label)}`);
  return EXIT_OK;
}
