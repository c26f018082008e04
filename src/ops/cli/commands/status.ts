import { createJsonLogger } from '../../../core/logger.js';
import type { OutboxStats } from '../../../core/ports.js';
import type { CliConfig } from '../config.js';
import { openStore } from '../database.js';
import { EXIT_OK } from '../errors.js';
import { humanDuration, renderTable } from '../format.js';
import type { CliIo } from '../io.js';
import { type EngineStatus, engineStatusJson, engineStatusText, groupStatusJson, groupStatusText, readEngineStatus } from './engine-status.js';
import type { RelayGroup } from '../../../core/ports.js';

/**
 * `outboxer status [--json]`: counts per state, the age of the oldest unpublished message, and the engine: its
 * configuration and, under v2, the live relays and what they hold. Read only: it writes nothing, joins no group.
 */
export async function statusCommand(config: CliConfig, io: CliIo): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const { store, postgres, label } = await openStore(config, logger, { max: 1 });
  let stats: OutboxStats;
  let engine: EngineStatus | undefined;
  let group: RelayGroup | undefined;
  try {
    stats = await store.stats();
    if (postgres !== undefined) engine = await readEngineStatus(postgres.database, postgres.tableName);
    else group = await store.relayGroup();
  } finally {
    await store.close();
  }
  if (config.json) {
    const { pending, scheduled, inFlight, published, dead, oldestPendingAgeSeconds } = stats;
    const engineJson = group === undefined ? engineStatusJson(engine) : groupStatusJson(group);
    io.out(`${JSON.stringify({ pending, scheduled, inFlight, published, dead, oldestPendingAgeSeconds, engine: engineJson })}\n`);
    return EXIT_OK;
  }
  const age = stats.oldestPendingAgeSeconds;
  const rows: string[][] = [
    ['pending', String(stats.pending), 'ready to publish now'],
    ['scheduled', String(stats.scheduled), 'delayed or backing off after a failure'],
    ['in flight', String(stats.inFlight), 'leased row by row by a relay of an older version (engine v1)'],
    ['published', String(stats.published), 'published, retained until purged'],
    ['dead', String(stats.dead), "parked: see 'outboxer dead list'"],
  ];
  io.out(`outbox ${label}\n`);
  io.out(renderTable(['state', 'count', ''], rows, new Set([1])));
  const waiting = stats.pending + stats.scheduled + stats.inFlight;
  io.out(`oldest pending message: ${waiting > 0 ? `${humanDuration(age)} old (${age.toFixed(1)} s)` : 'none'}\n`);
  io.out(group === undefined ? engineStatusText(engine) : groupStatusText(group));
  return EXIT_OK;
}
